/**
 * Unary calls over HTTP/2 (gRPC, and Connect or gRPC-Web on h2c) without Connect-node's request
 * and response adapters. Those serve any call, streaming included: each request gets an
 * `AbortController` that is aborted with a new `DOMException` when the stream closes, a body read
 * through an async generator, and an answer written through the compatibility layer
 * (`writeHead`, `write`, `addTrailers`). A unary call has one message each way: here its body is
 * read whole (bounded by the message limit), the call's signal ends with a shared reason, and the
 * answer goes out on the HTTP/2 stream itself: `respond`, one `end`, trailers when asked for.
 * The handler is the same (grpc/unary.ts for gRPC), so the wire is the same; the gRPC tests and
 * the generated Python client check it. Profiled: 1.7-1.9 % of a gRPC publish was the
 * `DOMException` alone.
 */
import type { Http2ServerRequest, Http2ServerResponse, OutgoingHttpHeaders } from "node:http2";
import type { ContextValues } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { callEnded, webHeaders } from "../context.ts";

/** The request's body, read whole; past `max` bytes reading stops (the handler refuses it). */
function bodyOf(req: Http2ServerRequest, max: number): AsyncIterable<Uint8Array> {
  const whole = new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    req.on("data", (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size > max) {
        req.pause();
        done();
      }
    });
    req.once("end", done);
    req.once("error", reject);
  });
  return {
    async *[Symbol.asyncIterator]() {
      const bytes = await whole;
      if (bytes.byteLength > 0) yield bytes;
    },
  };
}

function nodeHeaders(h: Headers | undefined, into: OutgoingHttpHeaders): OutgoingHttpHeaders {
  h?.forEach((v, k) => {
    into[k] = k === "set-cookie" ? h.getSetCookie() : v;
  });
  return into;
}

/**
 * Answers one unary call on HTTP/2 with `handler`; `extra` are headers the server adds unless the
 * call answers them itself (the request id).
 */
export async function serveH2Unary(
  handler: UniversalHandler,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
  opts: { contextValues: ContextValues; readMaxBytes: number; extra: OutgoingHttpHeaders },
): Promise<void> {
  const abort = new AbortController();
  req.once("close", () => abort.abort(callEnded));
  const uRes: UniversalServerResponse = await handler({
    httpVersion: "2.0",
    method: req.method,
    url: `http://${req.authority}${req.url}`,
    header: webHeaders(req.headers),
    // Some bytes past the limit, so that the handler sees a message too large as one.
    body: bodyOf(req, opts.readMaxBytes + 6),
    signal: abort.signal,
    contextValues: opts.contextValues,
  });
  const stream = res.stream;
  if (stream.destroyed || stream.closed) return;
  const chunks: Uint8Array[] = [];
  if (uRes.body instanceof Uint8Array) chunks.push(uRes.body);
  else if (uRes.body) for await (const c of uRes.body) chunks.push(c);
  const head: OutgoingHttpHeaders = { ":status": uRes.status };
  for (const [k, v] of Object.entries(opts.extra))
    if (v !== undefined && !uRes.header?.has(k) && !uRes.trailer?.has(k)) head[k] = v;
  nodeHeaders(uRes.header, head);
  const trailers = uRes.trailer?.keys().next().done === false ? uRes.trailer : undefined;
  // The compatibility layer already listens for `wantTrailers` and sends what addTrailers gave.
  if (trailers) res.addTrailers(nodeHeaders(trailers, {}));
  stream.respond(head, { waitForTrailers: trailers !== undefined });
  stream.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
}
