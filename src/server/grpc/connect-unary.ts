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
import {
  asConnectError,
  byteStream,
  callContext,
  parseInput,
  serializationOf,
  withUnaryHandlers,
} from "./unary-common.ts";
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
  const error = asConnectError(e);
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
  const lengthHint = req.header.get(headerUnaryContentLength);
  const bytes = await readAllBytes(byteStream(req), readMaxBytes, lengthHint);
  return compression ? compression.decompress(bytes, readMaxBytes) : bytes;
}
