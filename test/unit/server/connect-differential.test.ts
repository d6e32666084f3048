/**
 * Herald's Connect-protocol unary path (src/server/grpc/connect-unary.ts) against Connect's own
 * Connect handler: the same matrix of calls, byte for byte (status, headers, body), through the
 * same service implementation and interceptor. A Connect upgrade that changes the wire shows
 * here. The one deviation is deliberate and checked on its own, below.
 */
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { type ConnectRouter, createConnectRouter } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { NotifyRequestSchema } from "../../../gen/herald/v1/notify_service_pb.ts";
import { createRouter } from "../../../src/server/grpc/router.ts";
import { answer, type Call, handlerOf, options, routes } from "../../helpers/differential.ts";

const connectHandler = (router: ConnectRouter) => handlerOf(router, "connect");
const proto = { "content-type": "application/proto" };

const ours = createRouter(options);
routes(ours);
const connects = createConnectRouter(options);
routes(connects);

const notify = (title: string) =>
  toBinary(NotifyRequestSchema, create(NotifyRequestSchema, { title }));
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

const matrix: Record<string, Call> = {
  "a publish": { body: notify("deploy finished") },
  "a publish in JSON": {
    body: json({ title: "as json" }),
    headers: { "content-type": "application/json" },
  },
  "an error with metadata and details": { body: notify("fail") },
  "an error that is no ConnectError": { body: notify("crash") },
  "a gzip request, a gzip answer": {
    body: gzipSync(notify("compressed")),
    headers: { "content-encoding": "gzip", "accept-encoding": "gzip" },
  },
  "a large answer, compressed as the client accepts": {
    body: notify("big"),
    headers: { "accept-encoding": "br" },
  },
  "an unknown request encoding": { body: notify("x"), headers: { "content-encoding": "snappy" } },
  "a deadline that passes": { body: notify("slow"), headers: { "connect-timeout-ms": "20" } },
  "a malformed deadline": { body: notify("x"), headers: { "connect-timeout-ms": "soon" } },
  "a message over the size limit": { body: notify("y".repeat(2000)) },
  "a length that promises more than the body holds": {
    body: notify("x"),
    headers: { "content-length": "999" },
  },
  "no message at all": { body: new Uint8Array(0) },
  "JSON that is no request": {
    body: json({ title: 5, nope: true }),
    headers: { "content-type": "application/json" },
  },
  "a streaming content type": {
    body: notify("x"),
    headers: { "content-type": "application/connect+proto" },
  },
  "an unsupported content type": { body: notify("x"), headers: { "content-type": "text/plain" } },
  "a GET of a method with side effects": { body: new Uint8Array(0), method: "GET" },
  "a PUT": { body: notify("x"), method: "PUT" },
};

describe("the Connect-protocol unary path answers as Connect's own handler", () => {
  for (const [name, call] of Object.entries(matrix)) {
    it(name, async () => {
      const [fast, reference] = await Promise.all([
        answer(connectHandler(ours), call, proto),
        answer(connectHandler(connects), call, proto),
      ]);
      expect(fast).toEqual(reference);
    });
  }

  it("differs only where it says so: bytes that are no valid request", async () => {
    const call = { body: new Uint8Array([0xff, 0xff, 0xff]) };
    const fast = await answer(connectHandler(ours), call, proto);
    const reference = await answer(connectHandler(connects), call, proto);
    const error = (a: typeof fast) => JSON.parse(Buffer.from(a.body, "base64").toString());
    expect(reference.status).toBe(500);
    expect(error(reference).code).toBe("internal");
    // The bytes are the client's fault: 400, naming the message type (as over gRPC).
    expect(fast.status).toBe(400);
    expect(error(fast)).toMatchObject({
      code: "invalid_argument",
      message: expect.stringMatching(/not a valid herald\.v1\.NotifyRequest/),
    });
  });
});
