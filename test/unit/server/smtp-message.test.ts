/**
 * Email in reads a message over the size limit to its end (the client is answered 552 after),
 * holding at most the limit and one chunk of it: a 6 MB message against a 1 MiB limit is not
 * held whole, as it was (a hundred such clients took the process's memory).
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { messageBytes } from "../../../src/server/hooks/smtp.ts";

const chunk = Buffer.alloc(64 * 1024, 120);
const limit = 1024 * 1024;

describe("an SMTP message's bytes", () => {
  it("are all there under the limit", async () => {
    const parts = [Buffer.from("Subject: hi\r\n\r\n"), Buffer.from("hello\r\n")];
    expect(String(await messageBytes(Readable.from(parts), limit))).toBe(
      "Subject: hi\r\n\r\nhello\r\n",
    );
  });

  it("stop being held past the limit, while the rest is still read to its end", async () => {
    const big = Readable.from(Array.from({ length: 100 }, () => chunk));
    const held = await messageBytes(big, limit);
    expect(held.length).toBeLessThanOrEqual(limit + chunk.length);
    expect(big.readableEnded).toBe(true);
  });
});
