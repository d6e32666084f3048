/**
 * A unary call read and answered whole, over HTTP/2 (h2-unary.ts, before Fastify) and over
 * HTTP/1.1 (plugins/rpc.ts, a Connect or gRPC-Web call through Fastify): its body read into one
 * buffer, the request Connect's handler sees, and the answer's body as one buffer. Connect-node's
 * adapters read and write the same bodies through async iterables, and each call's objects then
 * outlived young-generation collections (BENCHMARKS.md, fourteenth and thirtieth sessions).
 */
import type { OutgoingHttpHeaders } from "node:http2";
import type { Readable } from "node:stream";
import type { ContextValues } from "@connectrpc/connect";
import type { UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { callEnded } from "../context.ts";
import { WholeBody } from "./whole-body.ts";

/**
 * A request's body (an HTTP/2 stream's, or an HTTP/1.1 request's), read whole; past `max` bytes
 * reading stops (the handler refuses it).
 * Its listeners leave the stream once the body is read: Node's HTTP/2 keeps a finished stream
 * past the next young-generation collection, and through these closures it kept the whole call
 * (its request, context and answer) too, promoting twice a stream's own bytes (BENCHMARKS.md).
 */
export function bodyOf(stream: Readable, max: number): WholeBody {
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
export async function bytesOf(body: UniversalServerResponse["body"]): Promise<Uint8Array> {
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  if (body instanceof WholeBody) return body.bytes;
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

export function nodeHeaders(
  h: Headers | undefined,
  into: OutgoingHttpHeaders,
): OutgoingHttpHeaders {
  h?.forEach((v, k) => {
    into[k] = k === "set-cookie" ? h.getSetCookie() : v;
  });
  return into;
}

/**
 * The request Connect's handler sees, its body whole: its `signal` a getter on the prototype,
 * made when first asked for (an object literal's getter would be a closure per call kept in the
 * old generation by V8: handler-context.ts says what that cost).
 */
export class WholeRequest implements UniversalServerRequest {
  readonly httpVersion: string;
  readonly method: string;
  readonly url: string;
  readonly header: Headers;
  readonly body: AsyncIterable<Uint8Array>;
  readonly contextValues: ContextValues;
  readonly #signal: () => AbortSignal;

  constructor(
    exchange: { httpVersion: string; method: string; url: string; header: Headers },
    body: AsyncIterable<Uint8Array>,
    contextValues: ContextValues,
    signal: () => AbortSignal,
  ) {
    this.httpVersion = exchange.httpVersion;
    this.method = exchange.method;
    this.url = exchange.url;
    this.header = exchange.header;
    this.body = body;
    this.contextValues = contextValues;
    this.#signal = signal;
  }

  get signal(): AbortSignal {
    return this.#signal();
  }
}
