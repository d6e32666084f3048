/**
 * A unary implementation called through the interceptors (server/invoke.ts): the interceptors
 * in order, first outermost, composed once per list; the implementation sees the call's own
 * context, or one with what an interceptor replaced; headers an interceptor answers reach the
 * call; and the call's signal (its AbortController, the client's) is made only when asked for.
 * Neither the context nor the request carries a getter of its own: V8 keeps an object's own
 * accessor in its hidden class, in the old generation, so a getter closure made per call kept
 * the call's whole graph past every scavenge (BENCHMARKS.md, twenty-third session).
 */
import { create, isMessage } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createMethodImplSpec,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  NotifyRequestSchema,
  NotifyResponseSchema,
  NotifyService,
} from "../../../gen/herald/v1/notify_service_pb.ts";
import type { UnarySpec } from "../../../src/server/grpc/unary.ts";
import { unaryContext } from "../../../src/server/handler-context.ts";
import { invokeUnary } from "../../../src/server/invoke.ts";

type Impl = (req: unknown, ctx: HandlerContext) => unknown;

function specOf(impl: Impl): UnarySpec {
  return createMethodImplSpec(NotifyService.method.notify, impl as never) as UnarySpec;
}

/** A call's context; `asked` counts how often its client's signal was made. */
function call(request = new AbortController()) {
  const asked = { n: 0 };
  const context = unaryContext({
    service: NotifyService,
    method: NotifyService.method.notify,
    protocolName: "rest",
    requestMethod: "POST",
    url: "http://localhost/herald.v1.NotifyService/Notify",
    shutdownSignal: new AbortController().signal,
    requestSignal: () => {
      asked.n += 1;
      return request.signal;
    },
    requestHeader: new Headers({ "x-test": "1" }),
  });
  return { context, asked, request };
}

const input = create(NotifyRequestSchema, { title: "Deploy finished" });

/** A call through `interceptors` to an implementation that keeps the context it is given. */
async function contextSeen(interceptors: Interceptor[]) {
  let seen: HandlerContext | undefined;
  const c = call();
  const keep = (_req: unknown, ctx: HandlerContext) => {
    seen = ctx;
    return {};
  };
  await invokeUnary(specOf(keep), c.context, input, interceptors);
  return { ...c, seen: seen as HandlerContext };
}

/** The names of `o`'s own getters and setters. */
function ownAccessors(o: object): string[] {
  return Object.entries(Object.getOwnPropertyDescriptors(o))
    .filter(([, d]) => d.get !== undefined || d.set !== undefined)
    .map(([name]) => name);
}

describe("invokeUnary", () => {
  it("gives the call's context and request no getter of their own, and still makes the signal when asked", async () => {
    let request: object | undefined;
    const peek: Interceptor = (next) => (req) => {
      request = req;
      return next(req);
    };
    const { seen, context, asked } = await contextSeen([peek]);
    expect(ownAccessors(context)).toEqual([]);
    expect(ownAccessors(request as object)).toEqual([]);
    expect(asked.n).toBe(0);
    expect((request as { signal: AbortSignal }).signal).toBe(seen.signal);
    expect(asked.n).toBe(1);
  });

  it("runs the interceptors first-outermost, composed once per list, and makes no signal unasked", async () => {
    const order: string[] = [];
    let composed = 0;
    const named =
      (name: string): Interceptor =>
      (next) => {
        composed += 1;
        return async (req) => {
          order.push(`${name} in`);
          const res = await next(req);
          order.push(`${name} out`);
          return res;
        };
      };
    const interceptors = [named("a"), named("b")];
    const spec = specOf(() => ({ replayed: true }));
    for (const _ of [1, 2]) {
      order.length = 0;
      const { context, asked } = call();
      const out = await invokeUnary(spec, context, input, interceptors);
      // Partial output comes back a full message of the method's output type.
      expect(isMessage(out, NotifyResponseSchema)).toBe(true);
      expect((out as unknown as { replayed: boolean }).replayed).toBe(true);
      expect(asked.n).toBe(0);
      expect(order).toEqual(["a in", "b in", "b out", "a out"]);
    }
    expect(composed).toBe(2);
  });

  it("gives the implementation the call's own context, whose signal ends with the client", async () => {
    const { seen, context, asked, request } = await contextSeen([]);
    expect(seen).toBe(context);
    const signal = seen.signal;
    expect(asked.n).toBe(1);
    request.abort("client gone");
    expect(signal.reason).toBe("client gone");
  });

  it("gives the implementation what an interceptor replaced, and the headers it answered", async () => {
    const replacing: Interceptor = (next) => async (req) => {
      const res = await next({ ...req, header: new Headers({ "x-test": "2" }) });
      return { ...res, header: new Headers({ "x-answered": "yes" }) };
    };
    const { seen, context, request } = await contextSeen([replacing]);
    expect(seen).not.toBe(context);
    expect(seen.requestHeader.get("x-test")).toBe("2");
    expect(seen.method).toBe(NotifyService.method.notify);
    expect(seen.values).toBe(context.values);
    expect(context.responseHeader.get("x-answered")).toBe("yes");
    request.abort("client gone");
    expect(seen.signal.reason).toBe("client gone");
  });

  it("refuses a request an interceptor built without the call's", async () => {
    const stranger: Interceptor = (next) => (req) => {
      if (req.stream) return next(req);
      return next({
        stream: false,
        message: req.message,
        method: req.method,
        service: req.service,
        requestMethod: req.requestMethod,
        url: req.url,
        signal: new AbortController().signal,
        header: req.header,
        contextValues: req.contextValues,
      });
    };
    const { context } = call();
    const err = await invokeUnary(
      specOf(() => ({})),
      context,
      input,
      [stranger],
    ).catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.Internal);
  });
});
