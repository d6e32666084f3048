/**
 * Connect-protocol unary calls (POST) without Connect's handler context. Connect's own handler
 * makes an AbortController for every call and aborts it at the end without a reason, which makes
 * a `DOMException` and its stack trace: 4.6 % of the serving process's CPU at the maximum of
 * Connect publishes over HTTP/1.1, the SDK's default protocol; the answer's body was an async
 * generator too (BENCHMARKS.md, thirtieth session). This handler does what Connect's unary
 * handler does, with Herald's call context (handler-context.ts) and invoker (invoke.ts) as the
 * gRPC one (unary.ts) does, and answers the body whole. GET calls (idempotent methods) and a
 * server that requires the protocol header keep Connect's handler.
 *
 * The wire is Connect's, built from Connect's exported pieces; test/unit/server/
 * connect-differential.test.ts sends the same matrix through both and compares the bytes. One
 * deviation is deliberate, as for gRPC: bytes that are no valid request are `invalid_argument`
 * naming the message type (Connect answers `internal`, a 500 for the client's mistake).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  compressionNegotiate,
  mergeNonProtocolHeaders,
  readAllBytes,
  type UniversalHandlerOptions,
  type UniversalServerRequest,
  type UniversalServerResponse,
  uResponseOk,
  uResponseUnsupportedMediaType,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  createHandlerFactory as connectFactory,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  errorToJsonBytes,
  headerContentType,
  headerTimeout,
  headerUnaryAcceptEncoding,
  headerUnaryContentLength,
  headerUnaryEncoding,
  parseContentType,
  parseTimeout,
  trailerMux,
} from "@connectrpc/connect/protocol-connect";
import { callEnded } from "../context.ts";
import type { UnaryContext } from "../handler-context.ts";
import { invokeUnary } from "../invoke.ts";
import type { UnarySpec } from "./unary.ts";
import { callContext, parseInput, serializationOf, withUnaryHandlers } from "./unary-common.ts";
import { WholeBody } from "./whole-body.ts";

type Factory = ReturnType<typeof connectFactory>;

/** Connect's Connect-protocol handler factory, with unary POSTs served by `unaryHandler`. */
export function createConnectHandlerFactory(options: Partial<UniversalHandlerOptions>): Factory {
  const opt = validateUniversalHandlerOptions(options);
  return withUnaryHandlers(connectFactory(opt), (spec, own) => {
    if (opt.requireConnectProtocolHeader) return undefined;
    const post = unaryHandler(opt, spec);
    return (req: UniversalServerRequest) => (req.method === "POST" ? post(req) : own(req));
  });
}

function unaryHandler(opt: UniversalHandlerOptions, spec: UnarySpec) {
  const serialization = serializationOf(opt, spec);
  return async function handle(req: UniversalServerRequest): Promise<UniversalServerResponse> {
    const type = parseContentType(req.header.get(headerContentType));
    if (type === undefined || type.stream) return uResponseUnsupportedMediaType;
    const timeout = parseTimeout(req.header.get(headerTimeout), opt.maxTimeoutMs);
    const context = callContext(opt, spec, req, {
      protocolName: "connect",
      timeoutMs: timeout.timeoutMs,
      responseHeader: {
        [headerContentType]: type.binary ? contentTypeUnaryProto : contentTypeUnaryJson,
      },
    });
    const compression = compressionNegotiate(
      opt.acceptCompression,
      req.header.get(headerUnaryEncoding),
      req.header.get(headerUnaryAcceptEncoding),
      headerUnaryAcceptEncoding,
    );
    let status = uResponseOk.status;
    let body: Uint8Array;
    try {
      if (opt.requestGate !== undefined) await opt.requestGate(context);
      if (compression.error) throw compression.error;
      if (timeout.error) throw timeout.error;
      const bytes = await readBody(req, opt.readMaxBytes, compression.request);
      const input = parseInput(serialization.getI(type.binary), bytes, spec);
      const output = await invokeUnary(spec, context, input, opt.interceptors);
      body = serialization.getO(type.binary).serialize(output);
    } catch (e) {
      ({ status, body } = failed(opt, context, e));
    } finally {
      context.abort(callEnded);
    }
    if (compression.response && body.byteLength >= opt.compressMinBytes) {
      body = await compression.response.compress(body);
      context.responseHeader.set(headerUnaryEncoding, compression.response.name);
    }
    const header = trailerMux(context.responseHeader, context.responseTrailer);
    header.set(headerUnaryContentLength, body.byteLength.toString(10));
    return { status, body: new WholeBody(body), header };
  };
}

/** A failed call's answer, as Connect's handler makes it: the error as JSON, its HTTP status. */
function failed(opt: UniversalHandlerOptions, context: UnaryContext, e: unknown) {
  const error =
    e instanceof ConnectError
      ? e
      : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
  context.abort(error);
  context.responseHeader.set(headerContentType, contentTypeUnaryJson);
  if (!error.isWireError) mergeNonProtocolHeaders(context.responseHeader, error.metadata);
  return { status: codeToHttpStatus(error.code), body: errorToJsonBytes(error, opt.jsonOptions) };
}

type Compression = ReturnType<typeof compressionNegotiate>["request"];

/** The request's bytes, whole, checked as Connect checks them, and decompressed. */
async function readBody(
  req: UniversalServerRequest,
  readMaxBytes: number,
  compression: Compression,
): Promise<Uint8Array> {
  if (!(typeof req.body === "object" && req.body !== null && Symbol.asyncIterator in req.body)) {
    throw new ConnectError("protocol error: expected a byte stream", Code.Internal);
  }
  // Handed over whole (whole-call.ts): read as one chunk, with no generator.
  const body = req.body instanceof WholeBody ? [await req.body.bytes] : req.body;
  const lengthHint = req.header.get(headerUnaryContentLength);
  const bytes = await readAllBytes(body as AsyncIterable<Uint8Array>, readMaxBytes, lengthHint);
  return compression ? compression.decompress(bytes, readMaxBytes) : bytes;
}
