/**
 * The SDK's `ask` when a wait fails (src/sdk/ask.ts), against scripted calls: a failure that
 * passes is waited out and the wait made again, within the same timeout; any other ends the ask;
 * stopped while it waits out a failure, it withdraws the question. `herald ask`'s own test runs
 * it against a server that goes away and comes back (test/api/cli-ask.test.ts).
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import { WaitForResponseResponseSchema } from "../../../gen/herald/v1/notify_service_pb.ts";
import { type AskCalls, ask } from "../../../src/sdk/ask.ts";
import { HeraldError } from "../../../src/sdk/errors.ts";

const question = create(NotificationSchema, { id: "q1", status: "sent" });
const failure = (code: string, retryAfterMs?: number) =>
  new HeraldError(code, { code, status: 0, ...(retryAfterMs ? { retryAfterMs } : {}) });
const input = { title: "Deploy?", actions: [{ id: "yes", label: "Deploy" }] };

/** Calls whose waits answer, in turn, what `waits` holds: an error to throw, or an outcome. */
function scripted(waits: (HeraldError | string)[]) {
  const asked: number[] = [];
  const canceled: string[] = [];
  const calls: AskCalls = {
    notify: async () => question,
    waitForResponse: async (_id, seconds) => {
      asked.push(seconds);
      const next = waits.shift() ?? "waiting";
      if (next instanceof HeraldError) throw next;
      return create(WaitForResponseResponseSchema, { outcome: next, notification: question });
    },
    cancel: async (id) => {
      canceled.push(id);
      return question;
    },
  };
  return { calls, asked, canceled };
}

describe("ask, when a wait fails", () => {
  it("waits out one that passes (the server's Retry-After first), asks again, and takes the answer", async () => {
    const s = scripted([failure("network"), failure("rate_limited", 300), "answered"]);
    const retries: [string, number][] = [];
    const started = performance.now();
    const a = await ask(s.calls, input, {
      onRetry: (e, ms) => retries.push([e.code, ms]),
    });
    expect(a.outcome).toBe("answered");
    expect(retries.map(([code]) => code)).toEqual(["network", "rate_limited"]);
    expect(retries[1]?.[1]).toBeGreaterThanOrEqual(300);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    // A long poll, then short ones until one comes back.
    expect(s.asked).toEqual([60, 1, 1]);
    expect(s.canceled).toEqual([]);
  });

  it("ends on a failure that no retry changes, without retrying", async () => {
    const s = scripted([failure("permission_denied")]);
    const retries: string[] = [];
    await expect(ask(s.calls, input, { onRetry: (e) => retries.push(e.code) })).rejects.toThrow(
      "permission_denied",
    );
    expect(retries).toEqual([]);
    expect(s.asked).toHaveLength(1);
  });

  it("keeps to its timeout through failures, then withdraws the question", async () => {
    const s = scripted(Array.from({ length: 100 }, () => failure("unavailable", 400)));
    const a = await ask(s.calls, input, { timeoutMs: 1_000 });
    expect(a.outcome).toBe("timeout");
    expect(s.canceled).toEqual(["q1"]);
    expect(s.asked.length).toBeLessThanOrEqual(4);
  });

  // Stopped while it waits out a failure, it withdraws the question, and says whether the
  // server could be told.
  it.each([
    ["withdraws the question and ends", true],
    ["says the question could not be withdrawn when the server does not answer", false],
  ])("stopped while it waits out a failure, %s", async (_, reachable) => {
    const s = scripted([failure("network", 60_000)]);
    const cancel = s.calls.cancel;
    s.calls.cancel = async (id) => {
      if (!reachable) throw failure("network");
      return cancel(id);
    };
    const stop = new AbortController();
    const told: boolean[] = [];
    const asking = ask(s.calls, input, {
      signal: stop.signal,
      onRetry: () => stop.abort(new Error("stopped")),
      onWithdraw: (withdrawn) => told.push(withdrawn),
    });
    await expect(asking).rejects.toThrow("stopped");
    expect(s.canceled).toEqual(reachable ? ["q1"] : []);
    expect(told).toEqual([reachable]);
  });
});
