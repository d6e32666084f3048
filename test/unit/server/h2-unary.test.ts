/**
 * Unary calls answered on their HTTP/2 stream, before the compatibility layer and Fastify
 * (src/server/grpc/h2-unary.ts), on the one-port server with Node's HTTP/2 client: what Fastify
 * did for them (request id, client address behind a trusted proxy, leaving a closing server's
 * calls to Fastify's 503), what it leaves to the request handler, and a call its client resets
 * mid-body, whose read ends (Node ends the stream's body on a reset) instead of waiting for ever;
 * and a read body's listeners taken off its stream.
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callContextValues } from "../../../src/server/call-context.ts";
import { h2UnaryTaker } from "../../../src/server/grpc/h2-unary.ts";
import { clientAddressOf, requestId } from "../../../src/server/options.ts";
import { createPolyglotServer, type PolyglotServer } from "../../../src/server/polyglot.ts";
import { clientAddressKey } from "../../../src/services/context.ts";

/** What the handler saw of each call, and how its body read ended. */
const seen: { address: string; body: string }[] = [];
let bodyRead: (outcome: string) => void = () => {};
let started: () => void = () => {};

const handler = Object.assign(
  async (req: UniversalServerRequest) => {
    started();
    let body = "";
    try {
      for await (const c of req.body as AsyncIterable<Uint8Array>) body += Buffer.from(c);
      bodyRead("read");
    } catch (e) {
      bodyRead(`failed: ${(e as Error).message}`);
      throw e;
    }
    seen.push({ address: req.contextValues?.get(clientAddressKey) ?? "", body });
    return {
      status: 200,
      header: new Headers({ "content-type": "application/grpc" }),
      body: new TextEncoder().encode(`echo ${body}`),
      trailer: new Headers({ "grpc-status": "0" }),
    };
  },
  { allowedMethods: ["POST"], requestPath: "/t.v1.S/Echo" },
) as unknown as UniversalHandler;

type Listener = [event: string | symbol, listener: (...args: never) => unknown];

/** The streams the taker took, newest last, with the listeners it put on each. */
const taken: { stream: http2.ServerHttp2Stream; added: Listener[] }[] = [];
const listenersOf = (s: http2.ServerHttp2Stream) =>
  s.eventNames().flatMap((e) => s.rawListeners(e).map((l) => [e, l] as Listener));
/** Whether a listener is one of `list` (the same event, the same function). */
const among =
  (list: Listener[]) =>
  ([e, l]: Listener) =>
    list.some(([f, m]) => f === e && m === l);

let server: PolyglotServer;
let url: string;
let closing = false;
beforeAll(async () => {
  // The request handler (Fastify's place) answers whatever the taker leaves.
  server = createPolyglotServer(
    (req, res) => {
      res.statusCode = closing ? 503 : 404;
      res.end(`left to the handler: ${req.method} ${req.url}`);
    },
    { keepAliveTimeoutMs: 5000 },
  );
  const taker = h2UnaryTaker({
    handlers: new Map([["/t.v1.S/Echo", handler]]),
    contextValues: callContextValues,
    clientAddress: clientAddressOf("127.0.0.1"),
    requestId,
    readMaxBytes: 1024,
    closing: () => closing,
    log: pino({ level: "silent" }),
  });
  server.takeStreams((stream, headers) => {
    const before = listenersOf(stream);
    const took = taker(stream, headers);
    const added = listenersOf(stream).filter((x) => !among(before)(x));
    if (took) taken.push({ stream, added });
    return took;
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: string;
}

async function call(path: string, body: string, headers: Record<string, string> = {}) {
  const session = http2.connect(url);
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const req = session.request({ ":method": "POST", ":path": path, ...headers });
      let head: http2.IncomingHttpHeaders = {};
      let trailers: http2.IncomingHttpHeaders = {};
      let text = "";
      req.on("response", (h) => {
        head = h;
      });
      req.on("trailers", (t) => {
        trailers = t;
      });
      req.on("data", (c: Buffer) => {
        text += c;
      });
      req.on("end", () =>
        resolve({ status: Number(head[":status"]), headers: head, trailers, body: text }),
      );
      req.on("error", reject);
      req.end(body);
    });
  } finally {
    session.close();
  }
}

describe("unary calls on their HTTP/2 stream", () => {
  it("answers with the handler's headers, body and trailers, and a request id of its own", async () => {
    const [a, b] = [await call("/t.v1.S/Echo", "one"), await call("/t.v1.S/Echo", "two")];
    expect(a).toMatchObject({ status: 200, body: "echo one", trailers: { "grpc-status": "0" } });
    expect(a.headers["content-type"]).toBe("application/grpc");
    expect(a.headers["request-id"]).toMatch(/^req_[\w-]{12}$/);
    expect(b.headers["request-id"]).toMatch(/^req_/);
    expect(b.headers["request-id"]).not.toBe(a.headers["request-id"]);
  });

  it("takes its body's listeners off the stream once the body is read", async () => {
    // Node keeps a finished stream past the next young-generation collection; a listener left
    // on it would keep the whole call (request, context, answer) with it.
    await call("/t.v1.S/Echo", "listened");
    const { stream, added } = taken.at(-1) as (typeof taken)[number];
    expect(added.map(([e]) => e).sort()).toEqual(["close", "data", "end", "error", "error"]);
    const left = listenersOf(stream).filter(among(added));
    // One stays: the taker's "error" listener, which logs a stream's failure after the answer.
    expect(left.map(([e]) => e)).toEqual(["error"]);
  });

  it("takes the client's address from a trusted proxy's X-Forwarded-For", async () => {
    seen.length = 0;
    await call("/t.v1.S/Echo", "behind", { "x-forwarded-for": "10.9.9.9, 203.0.113.7" });
    await call("/t.v1.S/Echo", "direct");
    expect(seen).toEqual([
      { address: "203.0.113.7", body: "behind" },
      { address: "127.0.0.1", body: "direct" },
    ]);
  });

  it("leaves other paths, other methods and a closing server's calls to the request handler", async () => {
    expect(await call("/t.v1.S/Other", "x")).toMatchObject({
      status: 404,
      body: "left to the handler: POST /t.v1.S/Other",
    });
    const session = http2.connect(url);
    const get = await new Promise<string>((resolve) => {
      const req = session.request({ ":method": "GET", ":path": "/t.v1.S/Echo" });
      let text = "";
      req.on("data", (c: Buffer) => {
        text += c;
      });
      req.on("end", () => resolve(text));
    });
    session.close();
    expect(get).toBe("left to the handler: GET /t.v1.S/Echo");
    closing = true;
    try {
      expect((await call("/t.v1.S/Echo", "late")).status).toBe(503);
    } finally {
      closing = false;
    }
  });

  it("ends the body's read when the client resets the stream mid-body, and serves on", async () => {
    const outcome = new Promise<string>((r) => {
      bodyRead = r;
    });
    const inHandler = new Promise<void>((r) => {
      started = r;
    });
    const session = http2.connect(url);
    const req = session.request({ ":method": "POST", ":path": "/t.v1.S/Echo" });
    req.on("error", () => {});
    req.write("half a mess");
    // Reset once the handler holds the call, before the body's end.
    await inHandler;
    req.close(http2.constants.NGHTTP2_CANCEL);
    // The read ends with what came; a gRPC handler refuses it as an incomplete envelope.
    expect(await outcome).toBe("read");
    session.close();
    // The server serves on.
    expect((await call("/t.v1.S/Echo", "after")).body).toBe("echo after");
  });
});
