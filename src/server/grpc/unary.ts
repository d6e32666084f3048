/**
 * gRPC unary calls without the streaming machinery. Connect-ES serves every gRPC call, unary
 * ones included, through a pipeline of async iterables (split envelopes, decompress, parse,
 * invoke, serialise, compress, join, catch), which cost gRPC publishes a third of REST's speed
 * under load (profiled: 16 % of the CPU in those iterables against 6 % for the Connect
 * protocol's unary path, and twice the garbage collection). This handler does what Connect's
 * own unary Connect-protocol handler does, for gRPC: read the one enveloped message whole,
 * invoke the implementation through the same interceptors, answer one envelope and the status
 * in trailers. Streaming methods keep Connect's handler. Built from Connect's public protocol
 * building blocks; the wire behaviour (statuses, error details, compression, timeouts, limits)
 * is Connect's. It uses Connect's protocol internals, so @connectrpc/connect is pinned exactly
 * (2.2.0) in package.json, and test/unit/server/grpc-differential.test.ts sends the same
 * matrix of calls through it and through Connect's own gRPC handler and compares the bytes: an
 * upgrade that changes the wire fails there. One deviation is deliberate and named there. The
 * change proposed upstream: docs/upstream/connect-es-grpc-unary.md.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  compressionNegotiate,
  encodeEnvelope,
  envelopeCompress,
  envelopeDecompress,
  type UniversalHandlerOptions,
  type UniversalServerRequest,
  type UniversalServerResponse,
  uResponseMethodNotAllowed,
  uResponseOk,
  uResponseUnsupportedMediaType,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  contentTypeJson,
  contentTypeProto,
  createHandlerFactory as grpcFactory,
  grpcStatusOk,
  headerAcceptEncoding,
  headerContentType,
  headerEncoding,
  headerGrpcStatus,
  headerTimeout,
  parseContentType,
  parseTimeout,
  setTrailerStatus,
} from "@connectrpc/connect/protocol-grpc";
import { callEnded } from "../context.ts";
import type { UnaryContext } from "../handler-context.ts";
import { invokeUnary } from "../invoke.ts";
import {
  asConnectError,
  byteStream,
  callContext,
  parseInput,
  serializationOf,
  withUnaryHandlers,
} from "./unary-common.ts";
import { WholeBody } from "./whole-body.ts";

type Factory = ReturnType<typeof grpcFactory>;
type Spec = Parameters<Factory>[0];
export type UnarySpec = Extract<Spec, { kind: "unary" }>;

/** Connect's gRPC handler factory, with unary methods served by `unaryHandler`. */
export function createGrpcHandlerFactory(options: Partial<UniversalHandlerOptions>): Factory {
  const opt = validateUniversalHandlerOptions(options);
  return withUnaryHandlers(grpcFactory(opt), (spec) => unaryHandler(opt, spec));
}

function unaryHandler(opt: UniversalHandlerOptions, spec: UnarySpec) {
  const serialization = serializationOf(opt, spec);
  return async function handle(req: UniversalServerRequest): Promise<UniversalServerResponse> {
    const type = parseContentType(req.header.get(headerContentType));
    if (type === undefined) return uResponseUnsupportedMediaType;
    if (req.method !== "POST") return uResponseMethodNotAllowed;
    const timeout = parseTimeout(req.header.get(headerTimeout), opt.maxTimeoutMs);
    const context = callContext(opt, spec, req, {
      protocolName: "grpc",
      timeoutMs: timeout.timeoutMs,
      responseHeader: { [headerContentType]: type.binary ? contentTypeProto : contentTypeJson },
      responseTrailer: { [headerGrpcStatus]: grpcStatusOk },
    });
    const compression = compressionNegotiate(
      opt.acceptCompression,
      req.header.get(headerEncoding),
      req.header.get(headerAcceptEncoding),
      headerAcceptEncoding,
    );
    if (compression.response) context.responseHeader.set(headerEncoding, compression.response.name);
    let body = new Uint8Array(0);
    try {
      if (opt.requestGate !== undefined) await opt.requestGate(context);
      if (compression.error) throw compression.error;
      if (timeout.error) throw timeout.error;
      const input = await readOneMessage(req, opt, compression.request);
      const message = parseInput(serialization.getI(type.binary), input, spec);
      const output = await invokeUnary(spec, context, message, opt.interceptors);
      const env = await envelopeCompress(
        { flags: 0, data: serialization.getO(type.binary).serialize(output) },
        compression.response,
        opt.compressMinBytes,
      );
      body = encodeEnvelope(env.flags, env.data);
    } catch (e) {
      failed(context, e);
    } finally {
      context.abort(callEnded);
    }
    return {
      ...uResponseOk,
      body: new WholeBody(body),
      header: context.responseHeader,
      trailer: context.responseTrailer,
    };
  };
}

/** The status of a failed call, in its trailers, as Connect's gRPC handler sets it. */
function failed(context: UnaryContext, e: unknown): void {
  const error = asConnectError(e);
  context.abort(error);
  setTrailerStatus(context.responseTrailer, error);
}

type Compression = ReturnType<typeof compressionNegotiate>["request"];

/** The request's single enveloped message, decompressed; a missing or extra one is refused. */
async function readOneMessage(
  req: UniversalServerRequest,
  opt: UniversalHandlerOptions,
  compression: Compression,
): Promise<Uint8Array> {
  const bytes = await readEnvelope(byteStream(req), opt.readMaxBytes);
  if (bytes.byteLength < 5) {
    throw new ConnectError(
      bytes.byteLength === 0
        ? "protocol error: missing input message for unary method"
        : "protocol error: incomplete envelope",
      bytes.byteLength === 0 ? Code.Unimplemented : Code.InvalidArgument,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(1);
  if (bytes.byteLength < 5 + length) {
    throw new ConnectError(
      "protocol error: promised more bytes than received",
      Code.InvalidArgument,
    );
  }
  if (bytes.byteLength > 5 + length) {
    throw new ConnectError(
      "protocol error: received extra input message for unary method",
      Code.Unimplemented,
    );
  }
  const env = await envelopeDecompress(
    { flags: view.getUint8(0), data: bytes.subarray(5) },
    compression,
    opt.readMaxBytes,
  );
  return env.data;
}

/**
 * The request's bytes: one envelope, and no further than one byte past it (an extra message).
 * A message over the limit is refused as soon as its envelope's header says so, in Connect's
 * words (message size N is larger than configured readMaxBytes M).
 */
async function readEnvelope(body: AsyncIterable<Uint8Array>, max: number): Promise<Uint8Array> {
  if (body instanceof WholeBody) {
    // Handed over whole (grpc/h2-unary.ts): checked at once.
    const bytes = await body.bytes;
    if (bytes.byteLength >= 5) envelopeLength(bytes, max);
    return bytes;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  let length = -1;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (length < 0 && size >= 5)
      length = envelopeLength(chunks.length === 1 ? chunk : concat(chunks, size), max);
    if (length >= 0 && size > 5 + length) break;
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : concat(chunks, size);
}

/** The length an envelope's header promises; over `max`, refused in Connect's words. */
function envelopeLength(head: Uint8Array, max: number): number {
  const length = new DataView(head.buffer, head.byteOffset, 5).getUint32(1);
  if (length > max) {
    throw new ConnectError(
      `message size ${length} is larger than configured readMaxBytes ${max}`,
      Code.ResourceExhausted,
    );
  }
  return length;
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
