/**
 * A DATABASE_URL whose server is not there stops the start saying where it looked, and never
 * the URL, which holds the password. Before, it said Node's `connect ECONNREFUSED 127.0.0.1:5999`
 * alone, which named neither PostgreSQL nor the setting.
 */
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/ports.ts";
import { launchHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

describe("a DATABASE_URL whose server is not there", () => {
  it("stops the start, saying where PostgreSQL was looked for, without the password", async () => {
    const port = await freePort();
    const proc = launchHerald({
      HERALD_DATA_DIR: tempDir("herald-database-url-"),
      DATABASE_URL: `postgres://herald:s3cret-Pa55@127.0.0.1:${port}/herald`,
    });
    expect(await proc.exited).toBe(1);
    expect(proc.stderr()).toContain(
      `herald failed to start: PostgreSQL at 127.0.0.1:${port} (DATABASE_URL) cannot be reached: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(proc.stdout() + proc.stderr()).not.toContain("s3cret-Pa55");
    expect(proc.stdout().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
  }, 30_000);
});
