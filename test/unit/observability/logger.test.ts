import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../../src/observability/logger.ts";

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("createLogger (JSON)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("writes one JSON object per line, a turn's lines in one write to stdout", async () => {
    const writes: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const log = createLogger({ level: "info", format: "json", role: "server" });
    log.info({ reqId: "req_1" }, "first");
    log.warn({ reqId: "req_2" }, "second");
    log.debug("below the level");
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toHaveLength(1);
    const lines = (writes[0] as string).split("\n").filter(Boolean);
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { level: 30, msg: "first", reqId: "req_1", role: "server", pid: process.pid },
      { level: 40, msg: "second", reqId: "req_2", role: "server" },
    ]);
    log.info("next turn");
    await turn();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1] as string)).toMatchObject({ msg: "next turn" });
  });

  it("drops its lines when stdout has gone, and does not throw", async () => {
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    vi.spyOn(process.stdout, "writable", "get").mockReturnValue(false);
    const log = createLogger({ level: "info", format: "json", role: "server" });
    log.info("nobody reads this");
    await turn();
    expect(write).not.toHaveBeenCalled();
  });
});
