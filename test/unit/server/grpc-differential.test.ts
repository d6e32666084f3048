/**
 * Herald's gRPC unary path (src/server/grpc/unary.ts) against Connect's own gRPC handler: the
 * same matrix of calls, byte for byte (status, headers, trailers, body), through the same
 * service implementation and interceptor. The fast path re-implements Connect's unary gRPC
 * handling with Connect's building blocks, so a Connect upgrade that changes the wire shows
 * here. Deviations are deliberate and named in `deviations`, each with its reason.
 */
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createConnectRouter,
  type Interceptor,
} from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import {
  NotifyRequestSchema,
  NotifyResponseSchema,
  NotifyService,
} from "../../../gen/herald/v1/notify_service_pb.ts";
import { createRouter } from "../../../src/server/grpc/unary.ts";

/** A stand-in implementation whose behaviour the request's title picks. */
function routes(router: ConnectRouter): void {
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

const options = {
  interceptors: [stamp],
  readMaxBytes: 1024,
  acceptCompression: [compressionGzip, compressionBrotli],
  compressMinBytes: 1024,
};

function grpcHandler(router: ConnectRouter): UniversalHandler {
  const h = router.handlers.find(
    (x) => x.requestPath === "/herald.v1.NotifyService/Notify" && x.protocolNames.includes("grpc"),
  );
  if (!h) throw new Error("no gRPC handler for Notify");
  return h;
}

const ours = createRouter(options);
routes(ours);
const connects = createConnectRouter(options);
routes(connects);

function envelope(message: Uint8Array, flags = 0): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}
const notify = (title: string) =>
  toBinary(NotifyRequestSchema, create(NotifyRequestSchema, { title }));

interface Call {
  body: Uint8Array;
  headers?: Record<string, string>;
  method?: string;
}

/** What a client sees of an answer: every byte of it, headers in order of name. */
async function answer(handler: UniversalHandler, call: Call) {
  const header = new Headers({
    "content-type": "application/grpc",
    te: "trailers",
    "x-caller": "differential",
    ...call.headers,
  });
  const res: UniversalServerResponse = await handler({
    httpVersion: "2.0",
    method: call.method ?? "POST",
    url: "http://localhost/herald.v1.NotifyService/Notify",
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

const matrix: Record<string, Call> = {
  "a publish": { body: envelope(notify("deploy finished")) },
  "an error with metadata and details": { body: envelope(notify("fail")) },
  "an error that is no ConnectError": { body: envelope(notify("crash")) },
  "a gzip request, a gzip answer": {
    body: envelope(gzipSync(notify("compressed")), 1),
    headers: { "grpc-encoding": "gzip", "grpc-accept-encoding": "gzip" },
  },
  "a large answer, compressed as the client accepts": {
    body: envelope(notify("big")),
    headers: { "grpc-accept-encoding": "br" },
  },
  "an unknown request encoding": {
    body: envelope(notify("x"), 1),
    headers: { "grpc-encoding": "snappy" },
  },
  "a compressed flag without an encoding": { body: envelope(notify("x"), 1) },
  "a deadline that passes": { body: envelope(notify("slow")), headers: { "grpc-timeout": "20m" } },
  "a malformed deadline": { body: envelope(notify("x")), headers: { "grpc-timeout": "soon" } },
  "a message over the size limit": { body: envelope(notify("y".repeat(2000))) },
  "an envelope that claims more than it holds": { body: envelope(notify("x")).slice(0, 8) },
  "no message at all": { body: new Uint8Array(0) },
  "two messages": {
    body: new Uint8Array([...envelope(notify("one")), ...envelope(notify("two"))]),
  },
  "JSON over gRPC": {
    body: envelope(new TextEncoder().encode(JSON.stringify({ title: "as json" }))),
    headers: { "content-type": "application/grpc+json" },
  },
  "an unsupported content type": {
    body: envelope(notify("x")),
    headers: { "content-type": "text/plain" },
  },
  "a GET": { body: new Uint8Array(0), method: "GET" },
};

/** Where Herald answers differently on purpose. */
const deviations: Record<string, string> = {
  "bytes that are no valid request":
    "invalid_argument naming the message type, where Connect says internal error: the bytes are the client's fault",
};

describe("the gRPC unary fast path answers as Connect's own handler", () => {
  for (const [name, call] of Object.entries(matrix)) {
    it(name, async () => {
      const [fast, reference] = await Promise.all([
        answer(grpcHandler(ours), call),
        answer(grpcHandler(connects), call),
      ]);
      expect(fast).toEqual(reference);
    });
  }

  it("serves the same methods under the same paths", () => {
    const paths = (r: ConnectRouter) =>
      r.handlers.map((h) => `${h.requestPath} ${h.protocolNames.join(",")}`).sort();
    expect(paths(ours)).toEqual(paths(connects));
  });

  it("differs only where it says so: bytes that are no valid request", async () => {
    const call = { body: envelope(new Uint8Array([0xff, 0xff, 0xff])) };
    const fast = await answer(grpcHandler(ours), call);
    const reference = await answer(grpcHandler(connects), call);
    const status = (a: typeof fast) => Object.fromEntries(a.trailers)["grpc-status"];
    expect(status(reference)).toBe(String(Code.Internal));
    expect(status(fast)).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(Object.fromEntries(fast.trailers)["grpc-message"] ?? "")).toMatch(
      /not a valid herald\.v1\.NotifyRequest/,
    );
    expect(Object.keys(deviations)).toEqual(["bytes that are no valid request"]);
  });
});
