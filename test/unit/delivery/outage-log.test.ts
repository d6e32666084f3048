/**
 * A background loop's failures while the database is away (src/delivery/outage-log.ts): said
 * once when the outage starts and once when it ends; any other failure each time it comes.
 */
import { describe, expect, it } from "vitest";
import { OutageLog } from "../../../src/delivery/outage-log.ts";
import type { Log } from "../../../src/domain/log.ts";

function recording() {
  const lines: [string, string, Record<string, unknown>][] = [];
  const at = (level: string) => (obj: unknown, msg?: string) =>
    lines.push([level, msg ?? "", obj as Record<string, unknown>]);
  const log: Log = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { log, lines };
}

const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
  code: "ECONNREFUSED",
});

describe("a loop's outage log", () => {
  it("says an outage once, counts its failed rounds, and says when it ends; twice, twice", () => {
    const { log, lines } = recording();
    const outage = new OutageLog(log, "the delivery worker");
    outage.succeeded(); // nothing to say
    for (let i = 0; i < 5; i++) outage.failed(refused, "delivery worker tick failed");
    outage.succeeded();
    outage.succeeded();
    outage.failed(refused, "delivery worker tick failed");
    outage.succeeded();
    expect(lines.map(([level, msg]) => [level, msg])).toEqual([
      ["warn", "the delivery worker: the database is unavailable; waiting for it"],
      ["info", "the delivery worker: the database is back"],
      ["warn", "the delivery worker: the database is unavailable; waiting for it"],
      ["info", "the delivery worker: the database is back"],
    ]);
    expect(lines[0]?.[2]).toEqual({ reason: "connect ECONNREFUSED 127.0.0.1:5432" });
    expect(lines[1]?.[2]).toMatchObject({ failed_rounds: 5 });
    expect(lines[3]?.[2]).toMatchObject({ failed_rounds: 1 });
  });

  it("logs any other failure each time, with its fields, outage or not", () => {
    const { log, lines } = recording();
    const outage = new OutageLog(log, "the webhook worker");
    const bug = new TypeError("x is undefined");
    outage.failed(bug, "webhook round failed", { job: "sendClears" });
    outage.failed(refused, "webhook round failed");
    outage.failed(bug, "webhook round failed");
    expect(lines.map(([level, msg]) => [level, msg])).toEqual([
      ["error", "webhook round failed"],
      ["warn", "the webhook worker: the database is unavailable; waiting for it"],
      ["error", "webhook round failed"],
    ]);
    expect(lines[0]?.[2]).toEqual({ err: bug, job: "sendClears" });
  });
});
