/**
 * Unary calls over HTTP/2 (gRPC, and Connect or gRPC-Web on h2c) answered on the HTTP/2 stream
 * itself, before Node's compatibility layer and Fastify see it (polyglot.ts, `takeStreams`).
 *
 * Why: under load a gRPC publish paid for objects a unary call does not need (the compatibility
 * layer's request and response; Fastify's request, reply and child logger) and for Connect-node's
 * adapters (an `AbortController` aborted with a new `DOMException`, a body read through an async
 * generator, the answer written through `writeHead`, `write`, `addTrailers`).
 * A gRPC call lives as long as its group commit, so those objects outlived young-generation
 * collections and were promoted: 9.6 KB per call against 1.5 KB for a REST call (sampled with
 * HeapProfiler, BENCHMARKS.md).
 *
 * What Fastify did for these calls is done here, with the same rules: the request id
 * (server/options.ts, `requestId`), echoed as `request-id`; the client's address behind trusted
 * proxies (`clientAddressOf`); and while the server closes, the stream is left to Fastify, which
 * answers 503. Streaming methods, HTTP/1.1 and every other path keep Fastify and Connect-node.
 * The handler is the same (grpc/unary.ts for gRPC), so the wire is the same; the gRPC tests, the
 * differential test and the generated Python client check it.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { ContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import type { FastifyBaseLogger } from "fastify";
import type { CallRequest } from "../call-context.ts";
import { callEnded, closeSignal, webHeaders } from "../context.ts";
import type { AddressedRequest } from "../options.ts";
import type { StreamTaker } from "../polyglot.ts";
import { bodyOf, bytesOf, nodeHeaders, WholeRequest } from "./whole-call.ts";

export interface H2UnaryOptions {
  /** The unary methods' handlers, by request path. */
  handlers: ReadonlyMap<string, UniversalHandler>;
  contextValues: (req: CallRequest) => ContextValues;
  clientAddress: (req: AddressedRequest) => string | undefined;
  requestId: () => string;
  readMaxBytes: number;
  /** True once the server closes: Fastify then answers 503. */
  closing: () => boolean;
  log: FastifyBaseLogger;
}

/** Takes the HTTP/2 streams that call a unary method with a method it allows. */
export function h2UnaryTaker(o: H2UnaryOptions): StreamTaker {
  return (stream, headers) => {
    const url = headers[":path"] ?? "";
    const q = url.indexOf("?");
    const handler = o.handlers.get(q < 0 ? url : url.slice(0, q));
    const method = headers[":method"] ?? "";
    if (!handler?.allowedMethods.includes(method) || o.closing()) return false;
    const id = o.requestId();
    stream.on("error", (err) => o.log.debug({ err, reqId: id }, "the RPC's stream failed"));
    serve(handler, stream, headers, id, o).catch((err: unknown) => {
      // A client gone before its answer is no error of ours.
      if (stream.destroyed) o.log.debug({ err, reqId: id }, "client went away before the answer");
      else {
        o.log.error({ err, reqId: id }, "answering the RPC failed");
        stream.close(2); // INTERNAL_ERROR
      }
    });
    return true;
  };
}

async function serve(
  handler: UniversalHandler,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  id: string,
  o: H2UnaryOptions,
): Promise<void> {
  const signal = closeSignal(stream, () => true, callEnded);
  const ip = o.clientAddress({ socket: stream.session?.socket ?? {}, headers });
  const uRes = await handler(
    new WholeRequest(
      {
        httpVersion: "2.0",
        method: headers[":method"] ?? "",
        url: `http://${headers[":authority"] ?? "localhost"}${headers[":path"]}`,
        header: webHeaders(headers),
      },
      // Some bytes past the limit, so that the handler sees a message too large as one.
      bodyOf(stream, o.readMaxBytes + 6),
      o.contextValues({ id, ip, headers }),
      signal,
    ),
  );
  const body = await bytesOf(uRes.body);
  if (stream.destroyed || stream.closed) return;
  const head: OutgoingHttpHeaders = { ":status": uRes.status };
  // The call may answer its request id itself, in its headers or (a gRPC error) its trailers.
  if (!uRes.header?.has("request-id") && !uRes.trailer?.has("request-id")) head["request-id"] = id;
  nodeHeaders(uRes.header, head);
  // The call is over: its trailers are final.
  const trailers = nodeHeaders(uRes.trailer, {});
  const anyTrailer = Object.keys(trailers).length > 0;
  if (anyTrailer) stream.once("wantTrailers", () => stream.sendTrailers(trailers));
  stream.respond(head, { waitForTrailers: anyTrailer });
  stream.end(body);
}
