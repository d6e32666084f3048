/**
 * One cleartext port for HTTP/1.1 and HTTP/2 with prior knowledge (h2c), which gRPC needs.
 * Node's `allowHTTP1` works only with TLS, so each new connection is sniffed: an HTTP/2 client
 * opens with the connection preface `PRI * HTTP/2.0…`, anything else is HTTP/1.1. The peeked
 * bytes are put back and the socket is handed to the matching Node server.
 *
 * The returned object is a `net.Server` with the extra methods Fastify looks for when it closes
 * (`closeIdleConnections`, `closeAllConnections`, `closeHttp2Sessions`), and `takeStreams`: a
 * function that is offered each HTTP/2 stream first, before Node's compatibility layer makes it a
 * request for the handler (grpc/h2-unary.ts answers unary RPCs there).
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import http2, {
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import net, { type Socket } from "node:net";

const preface = Buffer.from("PRI * HTTP/2.0");

export type Handler = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => void;

/** Answers an HTTP/2 stream itself (true), or leaves it to the request handler (false). */
export type StreamTaker = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => boolean;

export interface PolyglotServer extends net.Server {
  closeIdleConnections(): void;
  closeAllConnections(): void;
  closeHttp2Sessions(): void;
  /** Offers every HTTP/2 stream to `taker` before the request handler sees it. */
  takeStreams(taker: StreamTaker): void;
}

export interface PolyglotOptions {
  /** Idle keep-alive time for HTTP/1.1 connections and HTTP/2 sessions. */
  keepAliveTimeoutMs: number;
}

/**
 * Node's compatibility layer listens for an HTTP/2 server's streams and makes each a request:
 * from now on it hears only the streams that the taker (set with the returned function) leaves.
 */
function offerStreams(h2: http2.Http2Server): (taker: StreamTaker) => void {
  let taker: StreamTaker | undefined;
  const compat = h2.listeners("stream") as ((...args: unknown[]) => void)[];
  h2.removeAllListeners("stream");
  h2.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
    if (taker?.(stream, headers)) return;
    for (const listener of compat) listener.call(h2, stream, headers, ...rest);
  });
  return (t) => {
    taker = t;
  };
}

export function createPolyglotServer(handler: Handler, opts: PolyglotOptions): PolyglotServer {
  const h1 = http.createServer(handler as http.RequestListener);
  h1.keepAliveTimeout = opts.keepAliveTimeoutMs;
  const h2 = http2.createServer(
    {},
    handler as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  h2.setTimeout(opts.keepAliveTimeoutMs);
  const takeStreams = offerStreams(h2);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });

  const dispatch = (socket: Socket, head: Buffer) => {
    socket.pause();
    socket.unshift(head);
    if (head.subarray(0, preface.length).equals(preface)) {
      // The session takes over the socket's native handle, and first replays what is buffered
      // in JS (the peeked bytes, unshifted) on the next tick, before the handle reads more.
      h2.emit("connection", socket);
    } else {
      h1.emit("connection", socket);
      socket.resume();
    }
  };

  // Connections that have not yet sent enough to tell their protocol belong to neither inner
  // server, so closing must close them here (else a client that connects and says nothing holds
  // shutdown forever), and they get the keep-alive time to speak.
  const undecided = new Set<Socket>();
  const server = net.createServer((socket) => {
    undecided.add(socket);
    socket.once("close", () => undecided.delete(socket));
    const silent = () => socket.destroy();
    socket.setTimeout(opts.keepAliveTimeoutMs, silent);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      // Decide as soon as the bytes seen so far can no longer be (or already are) the preface.
      const n = Math.min(head.length, preface.length);
      if (n === preface.length || !head.subarray(0, n).equals(preface.subarray(0, n))) {
        socket.off("data", onData);
        undecided.delete(socket);
        socket.setTimeout(0);
        socket.off("timeout", silent);
        dispatch(socket, head);
      }
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  }) as PolyglotServer;

  const closeUndecided = () => {
    for (const socket of undecided) socket.destroy();
  };
  server.closeIdleConnections = () => {
    closeUndecided();
    h1.closeIdleConnections();
    for (const s of sessions) s.close();
  };
  server.closeAllConnections = () => {
    closeUndecided();
    h1.closeAllConnections();
    for (const s of sessions) s.destroy();
  };
  server.closeHttp2Sessions = () => {
    for (const s of sessions) s.close();
  };
  server.takeStreams = takeStreams;
  // Node's HTTP server tracks connections (for closeIdleConnections and request timeouts) from
  // its 'listening' event; the inner server never listens itself, so it is told when we do.
  server.on("listening", () => h1.emit("listening"));
  server.on("close", () => {
    h1.close();
    h2.close();
  });
  return server;
}
