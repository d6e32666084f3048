/**
 * Herald's gRPC unary path (src/server/grpc/unary.ts) against Connect's own gRPC handler: the
 * same matrix of calls, byte for byte (status, headers, trailers, body), through the same
 * service implementation and interceptor. The fast path re-implements Connect's unary gRPC
 * handling with Connect's building blocks, so a Connect upgrade that changes the wire shows
 * here. Deviations are deliberate and named in `deviations`, each with its reason.
 */
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, type ConnectRouter, createConnectRouter } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { NotifyRequestSchema } from "../../../gen/herald/v1/notify_service_pb.ts";
import { createRouter } from "../../../src/server/grpc/router.ts";
import { answer, type Call, handlerOf, options, routes } from "../../helpers/differential.ts";

const grpcHandler = (router: ConnectRouter) => handlerOf(router, "grpc");
const grpcHeaders = { "content-type": "application/grpc", te: "trailers" };

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
        answer(grpcHandler(ours), call, grpcHeaders),
        answer(grpcHandler(connects), call, grpcHeaders),
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
    const fast = await answer(grpcHandler(ours), call, grpcHeaders);
    const reference = await answer(grpcHandler(connects), call, grpcHeaders);
    const status = (a: typeof fast) => Object.fromEntries(a.trailers)["grpc-status"];
    expect(status(reference)).toBe(String(Code.Internal));
    expect(status(fast)).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(Object.fromEntries(fast.trailers)["grpc-message"] ?? "")).toMatch(
      /not a valid herald\.v1\.NotifyRequest/,
    );
    expect(Object.keys(deviations)).toEqual(["bytes that are no valid request"]);
  });
});
