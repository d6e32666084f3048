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
import type {
  UniversalHandler,
  UniversalServerRequest,
  UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import type { FastifyBaseLogger } from "fastify";
import type { CallRequest } from "../call-context.ts";
import { callEnded, closeSignal, webHeaders } from "../context.ts";
import type { AddressedRequest } from "../options.ts";
import type { StreamTaker } from "../polyglot.ts";
import { WholeBody } from "./whole-body.ts";

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

/**
 * The stream's body, read whole; past `max` bytes reading stops (the handler refuses it).
 * Its listeners leave the stream once the body is read: Node's HTTP/2 keeps a finished stream
 * past the next young-generation collection, and through these closures it kept the whole call
 * (its request, context and answer) too, promoting twice a stream's own bytes (BENCHMARKS.md).
 */
function bodyOf(stream: ServerHttp2Stream, max: number): WholeBody {
  return new WholeBody(
    new Promise<Uint8Array>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const data = (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size > max) {
          stream.pause();
          end();
        }
      };
      const settle = () => {
        stream.off("data", data);
        stream.off("end", end);
        stream.off("error", failed);
        stream.off("close", closed);
      };
      const end = () => {
        settle();
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
      };
      const failed = (err: unknown) => {
        settle();
        reject(err);
      };
      // A stream reset by its client ends without `end`: the read must not wait for ever.
      const closed = () => failed(callEnded);
      stream.on("data", data);
      stream.once("end", end);
      stream.once("error", failed);
      stream.once("close", closed);
    }),
  );
}

/** The answer's body, whole. */
async function bytesOf(body: UniversalServerResponse["body"]): Promise<Uint8Array> {
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  if (body instanceof WholeBody) return body.bytes;
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

function nodeHeaders(h: Headers | undefined, into: OutgoingHttpHeaders): OutgoingHttpHeaders {
  h?.forEach((v, k) => {
    into[k] = k === "set-cookie" ? h.getSetCookie() : v;
  });
  return into;
}

/**
 * The request Connect's handler sees: its `signal` a getter on the prototype, made when first
 * asked for (an object literal's getter would be a closure per call kept in the old
 * generation by V8: handler-context.ts says what that cost).
 */
class H2Request implements UniversalServerRequest {
  readonly httpVersion = "2.0";
  readonly method: string;
  readonly url: string;
  readonly header: Headers;
  readonly body: AsyncIterable<Uint8Array>;
  readonly contextValues: ContextValues;
  readonly #signal: () => AbortSignal;

  constructor(
    headers: IncomingHttpHeaders,
    body: AsyncIterable<Uint8Array>,
    contextValues: ContextValues,
    signal: () => AbortSignal,
  ) {
    this.method = headers[":method"] ?? "";
    this.url = `http://${headers[":authority"] ?? "localhost"}${headers[":path"]}`;
    this.header = webHeaders(headers);
    this.body = body;
    this.contextValues = contextValues;
    this.#signal = signal;
  }

  get signal(): AbortSignal {
    return this.#signal();
  }
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
    new H2Request(
      headers,
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
  const trailers = uRes.trailer?.keys().next().done === false ? uRes.trailer : undefined;
  if (trailers) stream.once("wantTrailers", () => stream.sendTrailers(nodeHeaders(trailers, {})));
  stream.respond(head, { waitForTrailers: trailers !== undefined });
  stream.end(body);
}
