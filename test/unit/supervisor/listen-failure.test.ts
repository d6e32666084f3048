/**
 * Why a listener could not open its port, in words that name the setting: the supervisor's
 * claim of each port (HERALD_PORT, HERALD_SMTP_PORT, HERALD_METRICS_PORT) and the serving
 * processes' own listeners say it this way. The real errors are Node's, as `listen` gives them.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { claimPort, listenFailure } from "../../../src/supervisor/port.ts";

const failure = (code: string) =>
  Object.assign(new Error(`listen ${code}: 127.0.0.1:25`), { code, syscall: "listen" });

describe("a port that cannot be opened", () => {
  it("is said by its setting: taken, privileged, or an address this machine does not have", () => {
    expect(
      listenFailure(failure("EADDRINUSE"), "127.0.0.1", 2525, "HERALD_SMTP_PORT").message,
    ).toBe("port 2525 on 127.0.0.1 is in use by another program (HERALD_SMTP_PORT)");
    expect(listenFailure(failure("EACCES"), "0.0.0.0", 25, "HERALD_SMTP_PORT").message).toBe(
      "port 25 on 0.0.0.0 needs a privilege Herald's user lacks (HERALD_SMTP_PORT): a port under 1024 needs CAP_NET_BIND_SERVICE, or use a higher one",
    );
    expect(listenFailure(failure("EADDRNOTAVAIL"), "192.0.2.1", 8080, "HERALD_PORT").message).toBe(
      "192.0.2.1 is not an address of this machine (HERALD_HOST)",
    );
    const other = failure("EMFILE");
    expect(listenFailure(other, "127.0.0.1", 8080, "HERALD_PORT")).toBe(other);
  });

  it("is found by the claim, from the kernel's own answers", async () => {
    const taken = createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, "127.0.0.1", () => resolve((taken.address() as { port: number }).port)),
    );
    try {
      await expect(claimPort("127.0.0.1", port, "HERALD_METRICS_PORT")).rejects.toThrow(
        `port ${port} on 127.0.0.1 is in use by another program (HERALD_METRICS_PORT)`,
      );
    } finally {
      taken.close();
    }
    // TEST-NET-1 (RFC 5737): an address no machine has.
    await expect(claimPort("192.0.2.1", 0)).rejects.toThrow(
      "192.0.2.1 is not an address of this machine (HERALD_HOST)",
    );
    // A free port is given back, and left free.
    const free = await claimPort("127.0.0.1", 0);
    expect(await claimPort("127.0.0.1", free)).toBe(free);
  });
});
