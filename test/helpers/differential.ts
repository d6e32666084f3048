/**
 * Herald's unary handlers against Connect's own, byte for byte (grpc-differential.test.ts,
 * connect-differential.test.ts): a stand-in implementation whose behaviour the request's title
 * picks, an interceptor, the routers' options, and what a client sees of an answer.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { NotificationSchema } from "../../gen/herald/v1/notification_pb.ts";
import { NotifyResponseSchema, NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";

/** A stand-in implementation whose behaviour the request's title picks. */
export function routes(router: ConnectRouter): void {
  router.rpc(NotifyService.method.notify, async (req, ctx) => {
    ctx.responseHeader.set("x-from-handler", "header");
    ctx.responseTrailer.set("x-trailer", "trailer");
    switch (req.title) {
      case "fail":
        throw new ConnectError(
          "no such topic",
          Code.FailedPrecondition,
          { "x-error-meta": "meta" },
          [{ desc: NotificationSchema, value: { id: "detail", title: "in the details" } }],
        );
      case "crash":
        throw new Error("not a ConnectError");
      case "slow":
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        throw ctx.signal.reason;
      case "big":
        return create(NotifyResponseSchema, {
          notification: { id: "big", title: "x".repeat(4000), topic: "t" },
        });
      default:
        return create(NotifyResponseSchema, {
          notification: { id: "n1", title: req.title, metadata: { a: 1 } },
        });
    }
  });
}

const stamp: Interceptor = (next) => async (req) => {
  const res = await next(req);
  res.header.set("x-interceptor", req.header.get("x-caller") ?? "none");
  return res;
};

export const options = {
  interceptors: [stamp],
  readMaxBytes: 1024,
  acceptCompression: [compressionGzip, compressionBrotli],
  compressMinBytes: 1024,
};

/** A Notify handler of `router` for `protocol` (grpc, connect). */
export function handlerOf(router: ConnectRouter, protocol: string): UniversalHandler {
  const h = router.handlers.find(
    (x) =>
      x.requestPath === "/herald.v1.NotifyService/Notify" && x.protocolNames.includes(protocol),
  );
  if (!h) throw new Error(`no ${protocol} handler for Notify`);
  return h;
}

export interface Call {
  body: Uint8Array;
  headers?: Record<string, string>;
  method?: string;
  /** The URL's query (a Connect GET). */
  query?: string;
}

/** What a client sees of an answer: every byte of it, headers in order of name. */
export async function answer(handler: UniversalHandler, call: Call, base: Record<string, string>) {
  const header = new Headers({ ...base, "x-caller": "differential", ...call.headers });
  const res: UniversalServerResponse = await handler({
    httpVersion: "2.0",
    method: call.method ?? "POST",
    url: `http://localhost/herald.v1.NotifyService/Notify${call.query ?? ""}`,
    header,
    body: (async function* () {
      yield call.body;
    })(),
    signal: new AbortController().signal,
    contextValues: undefined,
  } as never);
  const chunks: Uint8Array[] = [];
  if (res.body instanceof Uint8Array) chunks.push(res.body);
  else if (res.body) for await (const c of res.body) chunks.push(c);
  const sorted = (h?: ConstructorParameters<typeof Headers>[0]) =>
    [...new Headers(h)].sort(([a], [b]) => a.localeCompare(b));
  return {
    status: res.status,
    headers: sorted(res.header),
    trailers: sorted(res.trailer),
    body: Buffer.concat(chunks).toString("base64"),
  };
}
