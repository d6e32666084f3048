/**
 * What the SDK's two transports (grpc-transport.ts, connect-transport.ts) share: Connect's
 * default limits and accepted compressions, a method's serialisers, a unary call's request,
 * headers between Node's and the Fetch API's, and Node's errors as Connect-node codes them, so
 * that a call fails with the same code over either transport as over Connect-node's own.
 */
import type { DescMessage, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  createMethodUrl,
  type MethodSerializationLookup,
  runUnaryCall,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";

/** Connect's default read and write limits, as Connect-node's transports have them. */
export const limits = validateReadWriteMaxBytes(undefined, undefined, undefined);

/** Answers may come compressed, as to Connect-node's transports; requests go as they are. */
export const accepted = [compressionGzip, compressionBrotli];

const serializers = new WeakMap<object, MethodSerializationLookup<DescMessage, DescMessage>>();

/** A method's serialisers, made once per method (Connect's transports make them every call). */
export function serializationOf<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
): MethodSerializationLookup<I, O> {
  let s = serializers.get(method) as MethodSerializationLookup<I, O> | undefined;
  if (s === undefined) {
    s = createMethodSerializationLookup(method, undefined, undefined, limits);
    serializers.set(method, s as unknown as MethodSerializationLookup<DescMessage, DescMessage>);
  }
  return s;
}

/** A unary call as a Transport's `unary` is given it. */
export interface UnaryCall<I extends DescMessage, O extends DescMessage> {
  method: DescMethodUnary<I, O>;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  input: MessageInitShape<I>;
  contextValues: ContextValues | undefined;
}

/**
 * Runs a unary call (a POST of `header` to the method's URL) through Connect's `runUnaryCall`:
 * its deadline, its cancellation and the call's interceptors (none here); `next` sends it.
 */
export function runUnary<I extends DescMessage, O extends DescMessage>(
  baseUrl: string,
  call: UnaryCall<I, O>,
  header: Headers,
  next: (req: UnaryRequest<I, O>) => Promise<UnaryResponse<I, O>>,
): Promise<UnaryResponse<I, O>> {
  const { method, signal, timeoutMs, input, contextValues } = call;
  return runUnaryCall({
    interceptors: [],
    signal,
    timeoutMs,
    req: {
      stream: false,
      service: method.parent,
      method,
      requestMethod: "POST",
      url: createMethodUrl(baseUrl, method),
      header,
      contextValues: contextValues ?? createContextValues(),
      message: input,
    },
    next,
  });
}

/** A request's headers as Node takes them. */
export function nodeHeadersOf(header: Headers): Record<string, string> {
  const headers: Record<string, string> = {};
  header.forEach((v, k) => {
    headers[k] = v;
  });
  return headers;
}

/** Copies Node's headers (pseudo-headers left out) into `into`. */
export function copyHeaders(from: Record<string, unknown>, into: Headers): void {
  for (const k in from) {
    const v = from[k];
    if (k.startsWith(":") || v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) into.append(k, String(one));
    else into.set(k, String(v));
  }
}

/** A request's or stream's error, coded as Connect-node codes Node's errors. */
export function connectErrorFromNode(err: unknown): ConnectError {
  const codeOf = (e: unknown) => (e as { code?: unknown } | undefined)?.code;
  const chain: unknown[] = [];
  for (let e = err; e instanceof Error && !chain.includes(e); e = e.cause) chain.push(e);
  const has = (...codes: string[]) => chain.some((e) => codes.includes(codeOf(e) as string));
  const aborted = [
    "ERR_STREAM_WRITE_AFTER_END",
    "ERR_STREAM_DESTROYED",
    "ERR_HTTP2_INVALID_STREAM",
  ];
  const code = has(...aborted, "ECONNRESET")
    ? Code.Aborted
    : has("ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED")
      ? Code.Unavailable
      : Code.Internal;
  const ce = ConnectError.from(err, code);
  if (ce !== err) ce.cause = err;
  return ce;
}
