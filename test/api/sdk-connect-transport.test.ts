/**
 * The SDK's Connect transport over HTTP/1.1 (src/sdk/connect-transport.ts), the SDK's default,
 * against Connect-node's, call by call, from a bare HTTP/1.1 server that misbehaves the ways a
 * network or a proxy can. Against a real server: sdk-transports.test.ts.
 */
import http, { type ServerResponse } from "node:http";
import type net from "node:net";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { NotifyResponseSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import { createSdkConnectTransport } from "../../src/sdk/connect-transport.ts";
import {
  compare as compareTransports,
  expectSameOutcome,
  lateAndCancelled,
  publish,
} from "../helpers/transports.ts";

const connect = {
  theirs: (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  ours: (baseUrl: string) => createSdkConnectTransport(baseUrl),
};
const compare = (baseUrl: string, call: (t: Transport) => Promise<unknown>) =>
  compareTransports(connect, baseUrl, call);

/** A bare HTTP/1.1 server that answers every call with `answer`. */
async function bareServer(answer: (res: ServerResponse) => void) {
  const sockets = new Set<net.Socket>();
  const h1 = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  h1.on("connection", (s) => sockets.add(s));
  await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(h1.address() as AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => h1.close(() => r()));
    },
  };
}

const message = Buffer.from(
  toBinary(NotifyResponseSchema, create(NotifyResponseSchema, { replayed: true })),
);
const proto = { "content-type": "application/proto" };
const json = { "content-type": "application/json" };

describe("the SDK's Connect transport against a misbehaving server", () => {
  it.each([
    ["a message", (r: ServerResponse) => r.writeHead(200, proto).end(message), "ok"],
    [
      "a message, gzipped",
      (r: ServerResponse) =>
        r.writeHead(200, { ...proto, "content-encoding": "gzip" }).end(gzipSync(message)),
      "ok",
    ],
    [
      "a Connect error with a retry delay",
      (r: ServerResponse) =>
        r
          .writeHead(429, { ...json, "retry-after": "3" })
          .end(JSON.stringify({ code: "resource_exhausted", message: "slow down" })),
      "ResourceExhausted",
    ],
    [
      "a proxy's HTML error page",
      (r: ServerResponse) => r.writeHead(502, { "content-type": "text/html" }).end("<h1>bad</h1>"),
      "Unavailable",
    ],
    [
      "a wrong content type",
      (r: ServerResponse) => r.writeHead(200, { "content-type": "text/plain" }).end("hello"),
      "Unknown",
    ],
    [
      "an answer that does not parse",
      (r: ServerResponse) => r.writeHead(200, proto).end(Buffer.from([0xff, 0xff, 0xff])),
      "Internal",
    ],
    [
      "a connection cut mid-answer",
      (r: ServerResponse) => {
        r.writeHead(200, { ...proto, "content-length": String(message.length + 10) });
        r.write(message);
        setTimeout(() => r.socket?.destroy(), 20);
      },
      "Aborted",
    ],
  ])("%s: the same outcome", async (_, answer, expected) => {
    const bare = await bareServer(answer);
    try {
      await expectSameOutcome(connect, bare.url, expected);
    } finally {
      await bare.close();
    }
  });

  it("ends a call past its deadline, or cancelled, and closes its connection", async () => {
    const bare = await bareServer(() => {}); // never answers
    try {
      const { late, cancelled } = await lateAndCancelled(connect, bare.url);
      expect(late.ours).toEqual(late.theirs);
      expect(late.ours).toMatchObject({ code: "DeadlineExceeded" });
      expect(cancelled.ours).toEqual(cancelled.theirs);
      expect(cancelled.ours).toMatchObject({ code: "Canceled" });
    } finally {
      await bare.close();
    }
  });

  it("reports a server that cannot be reached as unavailable", async () => {
    const bare = await bareServer(() => {});
    await bare.close();
    const gone = await compare(bare.url, publish());
    expect(gone.ours).toEqual(gone.theirs);
    expect(gone.ours).toMatchObject({ code: "Unavailable" });
  });
});
