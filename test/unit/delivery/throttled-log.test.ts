/**
 * A line said at most once a minute per key, the ones held back counted in the next: a push
 * provider refusing Herald's configuration refuses every send of a fan-out.
 */
import { describe, expect, it } from "vitest";
import { ThrottledLog } from "../../../src/delivery/throttled-log.ts";

function lines() {
  const said: { fields: unknown; msg: string | undefined }[] = [];
  const log = {
    debug() {},
    info() {},
    warn() {},
    error(fields: unknown, msg?: string) {
      said.push({ fields, msg });
    },
  };
  return { log, said };
}

describe("ThrottledLog", () => {
  it("says a key's line once a minute, and counts what it held back in the next", () => {
    const { log, said } = lines();
    let now = 0;
    const t = new ThrottledLog(log, 60_000, () => now);
    for (let i = 0; i < 1000; i++) t.error("ios", { i }, "refused");
    t.error("android", { i: 0 }, "refused");
    expect(said).toEqual([
      { fields: { i: 0 }, msg: "refused" },
      { fields: { i: 0 }, msg: "refused" },
    ]);
    now = 59_999;
    t.error("ios", { i: 1000 }, "refused");
    expect(said).toHaveLength(2);
    now = 60_000;
    t.error("ios", { i: 1001 }, "refused");
    expect(said.at(-1)).toEqual({ fields: { i: 1001, held_back: 1000 }, msg: "refused" });
    now = 120_000;
    t.error("ios", { i: 1002 }, "refused");
    expect(said.at(-1)).toEqual({ fields: { i: 1002 }, msg: "refused" });
  });
});
