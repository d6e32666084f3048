/**
 * The SDK's gRPC transport (src/sdk/grpc-transport.ts) against Connect-node's, call by call, from
 * a bare HTTP/2 server that misbehaves the ways a network or a proxy can (no answer, a reset, an
 * HTTP error, a broken envelope, two messages). Against a real server: sdk-transports.test.ts.
 */
import http2, { type ServerHttp2Stream } from "node:http2";
import net, { type AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { NotifyResponseSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import { createSdkGrpcTransport } from "../../src/sdk/grpc-transport.ts";
import {
  compare as compareTransports,
  expectSameOutcome,
  lateAndCancelled,
  publish,
} from "../helpers/transports.ts";

const grpc = {
  theirs: (baseUrl: string) => createGrpcTransport({ baseUrl }),
  ours: (baseUrl: string) => createSdkGrpcTransport(baseUrl),
};
const compare = (baseUrl: string, call: (t: Transport) => Promise<unknown>) =>
  compareTransports(grpc, baseUrl, call);

/** A bare HTTP/2 server that answers each gRPC call with `answer`; its streams' reset codes. */
async function bareServer(answer: (stream: ServerHttp2Stream) => void) {
  const resets: number[] = [];
  const h2 = http2.createServer();
  h2.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.on("close", () => resets.push(stream.rstCode));
    stream.resume();
    stream.on("end", () => answer(stream));
  });
  await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(h2.address() as AddressInfo).port}`,
    resets,
    close: () => new Promise<void>((r) => h2.close(() => r())),
  };
}

const ok = { ":status": 200, "content-type": "application/grpc+proto" };
const envelope = (bytes: Uint8Array) => {
  const e = Buffer.alloc(5 + bytes.length);
  e.writeUInt32BE(bytes.length, 1);
  e.set(bytes, 5);
  return e;
};
const message = envelope(
  toBinary(NotifyResponseSchema, create(NotifyResponseSchema, { replayed: true })),
);

function answerWith(body: Buffer, trailers: Record<string, string>) {
  return (stream: ServerHttp2Stream) => {
    stream.respond(ok, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers(trailers));
    stream.end(body);
  };
}

describe("the SDK's gRPC transport against a misbehaving server", () => {
  it.each([
    ["a message and its status", answerWith(message, { "grpc-status": "0" }), "ok"],
    [
      "an error in the trailers",
      answerWith(Buffer.alloc(0), { "grpc-status": "9", "grpc-message": "no%20way" }),
      "FailedPrecondition",
    ],
    [
      "a trailers-only error",
      (s: ServerHttp2Stream) =>
        s.respond({ ...ok, "grpc-status": "14", "grpc-message": "later" }, { endStream: true }),
      "Unavailable",
    ],
    ["no status at all", answerWith(message, {}), "Internal"],
    ["no message", answerWith(Buffer.alloc(0), { "grpc-status": "0" }), "Unimplemented"],
    [
      "two messages",
      answerWith(Buffer.concat([message, message]), { "grpc-status": "0" }),
      "Unimplemented",
    ],
    [
      "HTTP 503 from a proxy",
      (s: ServerHttp2Stream) => s.respond({ ":status": 503 }, { endStream: true }),
      "Unavailable",
    ],
    // Connect-node reports the stream's error before its reset code.
    ["a reset: REFUSED_STREAM", (s: ServerHttp2Stream) => s.close(7), "Internal"],
    ["a reset: INTERNAL_ERROR", (s: ServerHttp2Stream) => s.close(2), "Internal"],
  ])("%s: the same outcome", async (_, answer, expected) => {
    const bare = await bareServer(answer);
    try {
      await expectSameOutcome(grpc, bare.url, expected);
    } finally {
      await bare.close();
    }
  });

  it("refuses an envelope cut short as Connect means to (Connect-node loses that error)", async () => {
    const cut = message.subarray(0, message.length - 2);
    const bare = await bareServer(answerWith(cut, { "grpc-status": "0" }));
    try {
      const { theirs, ours } = await compare(bare.url, publish());
      // Connect's envelope splitter throws this at the end of the body; its transport's pipe
      // drops the error, and the call fails as if no message had come (below).
      expect(ours).toMatchObject({
        code: "InvalidArgument",
        message: "protocol error: incomplete envelope",
      });
      expect(theirs).toMatchObject({
        code: "Unimplemented",
        message: "protocol error: missing output message for unary method",
      });
    } finally {
      await bare.close();
    }
  });

  it("reads an answer compressed as it accepted, as Connect-node's does", async () => {
    const { gzipSync } = await import("node:zlib");
    const plain = message.subarray(5);
    const packed = gzipSync(plain);
    const body = envelope(packed);
    body[0] = 1; // compressed
    const bare = await bareServer((s) => {
      s.respond({ ...ok, "grpc-encoding": "gzip" }, { waitForTrailers: true });
      s.once("wantTrailers", () => s.sendTrailers({ "grpc-status": "0" }));
      s.end(body);
    });
    try {
      const { theirs, ours } = await compare(bare.url, publish());
      expect(ours).toEqual(theirs);
      expect(ours).toMatchObject({ ok: { replayed: true } });
    } finally {
      await bare.close();
    }
  });

  it("ends a call past its deadline (its stream reset INTERNAL_ERROR), or cancelled (CANCEL)", async () => {
    const bare = await bareServer(() => {}); // never answers
    try {
      const { late, cancelled } = await lateAndCancelled(grpc, bare.url);
      expect(late.ours).toEqual(late.theirs);
      expect(late.ours).toMatchObject({ code: "DeadlineExceeded" });
      expect(cancelled.ours).toEqual(cancelled.theirs);
      expect(cancelled.ours).toMatchObject({ code: "Canceled" });
      await expect.poll(() => bare.resets.length).toBe(4);
      // As Connect-node does: CANCEL for a cancelled call only.
      expect(bare.resets.sort()).toEqual([2, 2, 8, 8]);
    } finally {
      await bare.close();
    }
  });

  it("ends a call whose deadline passes while it is still connecting", async () => {
    // A TLS handshake that never completes: the session never connects.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const late = await compare(url, publish(150));
      expect(late.ours).toEqual(late.theirs);
      expect(late.ours).toMatchObject({ code: "DeadlineExceeded" });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it("reports a server that cannot be reached as unavailable", async () => {
    const bare = await bareServer(() => {});
    await bare.close();
    const gone = await compare(bare.url, publish());
    expect(gone.ours.code).toBe(gone.theirs.code);
    expect(gone.ours).toMatchObject({ code: "Unavailable" });
  });
});
