/**
 * What Herald's two unary handlers (gRPC: unary.ts; the Connect protocol: connect-unary.ts)
 * share: a protocol's handler factory with its unary handlers replaced, the call's context
 * (handler-context.ts), the request's body and message (the client's mistakes named), and a
 * thrown error as the one answered.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  type ProtocolHandlerFactory,
  type UniversalHandler,
  type UniversalHandlerFn,
  type UniversalHandlerOptions,
  type UniversalServerRequest,
} from "@connectrpc/connect/protocol";
import { type UnaryContext, unaryContext } from "../handler-context.ts";
import type { UnarySpec } from "./unary.ts";

/** The shutdown of a router made without one (tests): never. */
const neverShutDown = new AbortController().signal;

/**
 * `base` with each unary method's handler replaced by what `unary` gives for it (Connect's own
 * handler, `own`, where it gives none), under the same paths, methods and content types.
 */
export function withUnaryHandlers<F extends ProtocolHandlerFactory>(
  base: F,
  unary: (spec: UnarySpec, own: UniversalHandler) => UniversalHandlerFn | undefined,
): F {
  const fact = (spec: Parameters<F>[0]) => {
    const h = base(spec);
    const replaced = spec.kind === "unary" ? unary(spec as UnarySpec, h) : undefined;
    if (replaced === undefined) return h;
    return Object.assign(replaced, {
      protocolNames: h.protocolNames,
      allowedMethods: h.allowedMethods,
      supportedContentType: h.supportedContentType,
      requestPath: h.requestPath,
      service: h.service,
      method: h.method,
    });
  };
  return Object.assign(fact, { protocolName: base.protocolName }) as unknown as F;
}

/** The method's binary and JSON serialisers, with the handler's limits. */
export const serializationOf = (opt: UniversalHandlerOptions, spec: UnarySpec) =>
  createMethodSerializationLookup(spec.method, opt.binaryOptions, opt.jsonOptions, opt);

/** A unary call's context, as Connect's handlers make theirs, for `protocolName`. */
export function callContext(
  opt: UniversalHandlerOptions,
  spec: UnarySpec,
  req: UniversalServerRequest,
  call: {
    protocolName: string;
    timeoutMs: number | undefined;
    responseHeader: Record<string, string>;
    responseTrailer?: Record<string, string>;
  },
): UnaryContext {
  return unaryContext({
    service: spec.method.parent,
    method: spec.method,
    requestMethod: req.method,
    shutdownSignal: opt.shutdownSignal ?? neverShutDown,
    requestSignal: () => req.signal,
    requestHeader: req.header,
    url: req.url,
    contextValues: req.contextValues,
    ...call,
  });
}

/**
 * The request message. Connect calls bytes that do not parse an internal error; they are the
 * client's: `invalid_argument`, naming the message type.
 */
export function parseInput<T>(
  s: { parse(data: Uint8Array): T },
  input: Uint8Array,
  spec: UnarySpec,
): T {
  try {
    return s.parse(input);
  } catch (e) {
    // JSON that names a field wrongly already says which field, as the client's mistake.
    if (e instanceof ConnectError && e.code === Code.InvalidArgument) throw e;
    const why = e instanceof Error ? e.message : String(e);
    throw new ConnectError(
      `the request is not a valid ${spec.method.input.typeName}: ${why}`,
      Code.InvalidArgument,
    );
  }
}

/** What a call threw, as the error its client is answered: anything but a ConnectError is internal. */
export const asConnectError = (e: unknown): ConnectError =>
  e instanceof ConnectError
    ? e
    : new ConnectError("internal error", Code.Internal, undefined, undefined, e);

/** The request's body, which a unary call reads whole; anything else is Herald's mistake. */
export function byteStream(req: UniversalServerRequest): AsyncIterable<Uint8Array> {
  if (!(typeof req.body === "object" && req.body !== null && Symbol.asyncIterator in req.body)) {
    throw new ConnectError("protocol error: expected a byte stream", Code.Internal);
  }
  return req.body as AsyncIterable<Uint8Array>;
}
