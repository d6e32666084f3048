/**
 * A unary call's context (server/handler-context.ts): its one signal ends when the server shuts
 * down, the client goes away, the deadline passes or the call ends, whichever is first, with
 * that reason, whether the signal was asked for before (a long poll holds it) or only after (it
 * is made when first asked for); an ended call is no longer the shutdown's to abort.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { NotifyService } from "../../../gen/herald/v1/notify_service_pb.ts";
import { callEnded } from "../../../src/server/context.ts";
import { unaryContext } from "../../../src/server/handler-context.ts";

function context(o: { shutdown?: AbortController; request?: AbortController; timeoutMs?: number }) {
  const shutdown = o.shutdown ?? new AbortController();
  return unaryContext({
    service: NotifyService,
    method: NotifyService.method.notify,
    protocolName: "rest",
    requestMethod: "POST",
    url: "http://localhost/herald.v1.NotifyService/Notify",
    shutdownSignal: shutdown.signal,
    requestSignal: o.request?.signal,
    timeoutMs: o.timeoutMs,
    requestHeader: new Headers({ "x-test": "1" }),
    responseHeader: { "content-type": "application/proto" },
  });
}

describe("a unary call's context", () => {
  it("ends every call under way when the server shuts down, with the shutdown's reason", () => {
    const shutdown = new AbortController();
    const calls = [context({ shutdown }), context({ shutdown }), context({ shutdown })];
    // The first two hold their signals (a long poll does); the third never asked for its own.
    const held = [calls[0]?.signal, calls[1]?.signal];
    calls[1]?.abort(callEnded);
    shutdown.abort("going down");
    expect(held.map((s) => s?.reason)).toEqual(["going down", callEnded]);
    expect(calls[2]?.signal.reason).toBe("going down");
  });

  it("ends a call whose client went away, and only that one", () => {
    const request = new AbortController();
    const gone = context({ request });
    const asked = context({ request });
    const held = asked.signal;
    const other = context({});
    request.abort("client gone");
    expect(held.reason).toBe("client gone");
    expect(gone.signal.reason).toBe("client gone");
    expect(other.signal.aborted).toBe(false);
  });

  it("ends a call at its deadline as deadline_exceeded, and says what is left before", async () => {
    const c = context({ timeoutMs: 30 });
    const left = c.timeoutMs() as number;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(30);
    await new Promise((resolve) => c.signal.addEventListener("abort", resolve));
    expect(ConnectError.from(c.signal.reason).code).toBe(Code.DeadlineExceeded);
    expect(context({}).timeoutMs()).toBeUndefined();
  });

  it("keeps the first reason: a call that ended is not aborted again by a late event", () => {
    const shutdown = new AbortController();
    const request = new AbortController();
    const c = context({ shutdown, request, timeoutMs: 10_000 });
    const held = c.signal;
    const never = context({ shutdown, request, timeoutMs: 10_000 });
    c.abort(callEnded);
    never.abort(callEnded);
    request.abort("late");
    shutdown.abort("later");
    expect(held.reason).toBe(callEnded);
    // One that ended before anything asked for its signal gets it ended, for the same reason.
    expect(never.signal.reason).toBe(callEnded);
  });

  it("starts ended when the server is already shutting down or the client already left", () => {
    const shutdown = new AbortController();
    shutdown.abort("down");
    expect(context({ shutdown }).signal.reason).toBe("down");
    const request = new AbortController();
    request.abort("left");
    expect(context({ request }).signal.reason).toBe("left");
    expect(ConnectError.from(context({ timeoutMs: 0 }).signal.reason).code).toBe(
      Code.DeadlineExceeded,
    );
  });

  it("gives the call its request headers as they are, and its own response headers", () => {
    const c = context({});
    expect(c.requestHeader.get("x-test")).toBe("1");
    expect(c.responseHeader.get("content-type")).toBe("application/proto");
    c.responseHeader.set("request-id", "r1");
    expect(context({}).responseHeader.has("request-id")).toBe(false);
  });
});
