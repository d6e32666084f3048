/**
 * Herald's gRPC unary handler (src/server/grpc/unary.ts), on the wire with Node's HTTP/2 client:
 * a publish, gzip both ways, a JSON-coded call, and every malformed envelope answered with the
 * status Connect's own gRPC handler gives (HTTP 200, the status in trailers), never a hang or a
 * 500; Connect's generated client and its deadline; server streaming unaffected.
 */
import http2 from "node:http2";
import { gunzipSync, gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { compressionGzip, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NotifyRequestSchema,
  NotifyResponseSchema,
  NotifyService,
} from "../../gen/herald/v1/notify_service_pb.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ bodyLimitBytes: 4096 });
});
afterAll(async () => server.close());

function envelope(message: Uint8Array, flags = 0): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt8(flags, 0);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

const publish = (title: string) =>
  toBinary(NotifyRequestSchema, create(NotifyRequestSchema, { title }));

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}

/** One gRPC call by hand; answers HTTP status, headers, trailers and body. */
async function call(
  body: Buffer,
  headers: Record<string, string> = {},
  path = "/herald.v1.NotifyService/Notify",
): Promise<Answer> {
  const session = http2.connect(server.url);
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const req = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        authorization: `Bearer ${server.apiKey}`,
        ...headers,
      });
      const chunks: Buffer[] = [];
      let head: http2.IncomingHttpHeaders = {};
      let trailers: http2.IncomingHttpHeaders = {};
      req.on("response", (h) => {
        head = h;
      });
      req.on("trailers", (t) => {
        trailers = t;
      });
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () =>
        resolve({
          status: Number(head[":status"]),
          headers: head,
          trailers,
          body: Buffer.concat(chunks),
        }),
      );
      req.on("error", reject);
      req.end(body);
    });
  } finally {
    session.close();
  }
}

/** The gRPC status of an answer: in trailers, or in the headers of a trailers-only answer. */
const grpcStatus = (a: Answer) => Number(a.trailers["grpc-status"] ?? a.headers["grpc-status"]);
const grpcMessage = (a: Answer) =>
  decodeURIComponent(String(a.trailers["grpc-message"] ?? a.headers["grpc-message"] ?? ""));

describe("gRPC unary calls", () => {
  it("publish: one enveloped response, status 0 in trailers", async () => {
    const a = await call(envelope(publish("by hand")));
    expect(a.status).toBe(200);
    expect(a.headers["content-type"]).toBe("application/grpc+proto");
    expect(grpcStatus(a)).toBe(0);
    expect(a.body.readUInt8(0)).toBe(0);
    expect(a.body.readUInt32BE(1)).toBe(a.body.length - 5);
    const res = fromBinary(NotifyResponseSchema, a.body.subarray(5));
    expect(res.notification?.title).toBe("by hand");
  });

  it("gzip: a compressed request is read, and the response is compressed when asked", async () => {
    const a = await call(envelope(gzipSync(publish("zipped")), 1), {
      "grpc-encoding": "gzip",
      "grpc-accept-encoding": "gzip",
    });
    expect(grpcStatus(a)).toBe(0);
    const flags = a.body.readUInt8(0);
    const data = a.body.subarray(5);
    const res = fromBinary(NotifyResponseSchema, flags === 1 ? gunzipSync(data) : data);
    expect(res.notification?.title).toBe("zipped");
    if (flags === 1) expect(a.headers["grpc-encoding"]).toBe("gzip");
  });

  it("JSON-coded gRPC (application/grpc+json) works too", async () => {
    const a = await call(envelope(Buffer.from(JSON.stringify({ title: "as json" }))), {
      "content-type": "application/grpc+json",
    });
    expect(grpcStatus(a)).toBe(0);
    expect(JSON.parse(a.body.subarray(5).toString()).notification.title).toBe("as json");
  });

  it.each([
    ["no message", Buffer.alloc(0), Code.Unimplemented, /missing input message/],
    [
      "two messages",
      Buffer.concat([envelope(publish("a")), envelope(publish("b"))]),
      Code.Unimplemented,
      /extra input message/,
    ],
    [
      "a cut envelope",
      envelope(publish("cut")).subarray(0, 9),
      Code.InvalidArgument,
      /promised more bytes/,
    ],
    ["four bytes", Buffer.from([0, 0, 0, 0]), Code.InvalidArgument, /incomplete envelope/],
    [
      "a compressed flag without an encoding",
      envelope(gzipSync(publish("z")), 1),
      Code.Internal,
      /compress/,
    ],
    [
      "a message over the limit",
      envelope(publish("x".repeat(5000))),
      Code.ResourceExhausted,
      /larger than/,
    ],
    [
      "bytes that are no message",
      envelope(Buffer.from([0xff, 0xff, 0xff])),
      Code.InvalidArgument,
      /.+/,
    ],
  ])("refuses %s with a gRPC status, HTTP 200", async (_name, body, code, message) => {
    const a = await call(body);
    expect(a.status).toBe(200);
    expect(grpcStatus(a)).toBe(code);
    expect(grpcMessage(a)).toMatch(message);
  });

  it("an unknown grpc-encoding is refused as Connect refuses it, naming what is accepted", async () => {
    const a = await call(envelope(publish("br?"), 1), { "grpc-encoding": "snappy" });
    expect(grpcStatus(a)).toBe(Code.Unimplemented);
    expect(grpcMessage(a)).toMatch(/supported encodings are gzip/);
  });

  it("Herald's own errors keep their details (no credential: unauthenticated)", async () => {
    const a = await call(envelope(publish("who?")), { authorization: "Bearer hk_nope" });
    expect(grpcStatus(a)).toBe(Code.Unauthenticated);
    expect(a.trailers["grpc-status-details-bin"]).toBeTruthy();
  });

  it("the generated client: a publish, gzip, and a deadline it can meet", async () => {
    const client = createClient(
      NotifyService,
      createGrpcTransport({ baseUrl: server.url, sendCompression: compressionGzip }),
    );
    const res = await client.notify(
      { title: "generated" },
      { headers: { authorization: `Bearer ${server.apiKey}` }, timeoutMs: 5000 },
    );
    expect(res.notification?.title).toBe("generated");
    const refused = await client
      .notify({ title: "" }, { headers: { authorization: `Bearer ${server.apiKey}` } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it("a malformed grpc-timeout is refused", async () => {
    const a = await call(envelope(publish("late")), { "grpc-timeout": "soon" });
    expect(grpcStatus(a)).toBe(Code.InvalidArgument);
  });
});
