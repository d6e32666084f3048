/**
 * A unary implementation called through the interceptors, for the two paths that call one
 * themselves: the gRPC unary handler (grpc/unary.ts) and the REST shim (rest/shim.ts, and the
 * hooks and mail that publish through it). Connect's `invokeUnaryImplementation` does the same,
 * but reads the call's `signal` twice for every call (its request carries it; the context it
 * hands the implementation is a spread copy of the call's), so every publish made the
 * AbortController that handler-context.ts makes only when asked for, its listener on the
 * request's signal, and the abort event at the call's end, and spread the context (profiled:
 * Connect's `mergeRequest` alone 1.8-2.1 % of a publish's CPU, the signal and its end 2.5 %).
 *
 * Here the request's `signal` is a getter; the implementation gets the call's own context
 * unless an interceptor changed the request's service, headers or values (then a copy with
 * those, as Connect gives); and the interceptors, all stateless and fixed when the server
 * starts, are composed once per list rather than once per call. What a handler and an
 * interceptor see is Connect's contract.
 */
import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type HandlerContext,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { UnarySpec } from "./grpc/unary.ts";
import type { UnaryContext } from "./handler-context.ts";

type AnyFn = (req: UnaryRequest | StreamRequest) => Promise<UnaryResponse | StreamResponse>;

/** Where the composed chain's innermost function finds the call it serves. */
const callOf = Symbol("herald.call");

interface Call {
  spec: UnarySpec;
  context: UnaryContext;
}

type CallRequest = UnaryRequest & { [callOf]?: Call };

/**
 * The request the interceptors see: its `signal` a getter on the prototype, not on each call's
 * object (an object literal's getter is a closure per call that V8 keeps in the object's
 * hidden class, in the old generation: handler-context.ts says what that cost).
 */
class UnaryCall implements UnaryRequest {
  readonly stream = false as const;
  readonly message: Message;
  readonly method: UnarySpec["method"];
  readonly service: UnarySpec["method"]["parent"];
  readonly requestMethod: string;
  readonly url: string;
  readonly header: Headers;
  readonly contextValues: UnaryContext["values"];
  readonly [callOf]: Call;

  constructor(call: Call, message: Message) {
    const { spec, context } = call;
    this.message = message;
    this.method = spec.method;
    this.service = spec.method.parent;
    this.requestMethod = context.requestMethod;
    this.url = context.url;
    this.header = context.requestHeader;
    this.contextValues = context.values;
    this[callOf] = call;
  }

  get signal(): AbortSignal {
    return this[callOf].context.signal;
  }
}

/** The context the implementation sees: the call's, with what an interceptor replaced. */
function contextFor(call: Call, req: UnaryRequest): HandlerContext {
  const { context } = call;
  if (
    req.service === context.service &&
    req.header === context.requestHeader &&
    req.contextValues === context.values
  ) {
    return context;
  }
  return {
    method: context.method,
    service: req.service,
    // A spread of the call's request has no `signal` of its own (a prototype getter).
    get signal() {
      return req.signal ?? context.signal;
    },
    timeoutMs: () => context.timeoutMs(),
    requestMethod: context.requestMethod,
    requestHeader: req.header,
    responseHeader: context.responseHeader,
    responseTrailer: context.responseTrailer,
    protocolName: context.protocolName,
    values: req.contextValues,
    url: context.url,
  };
}

/** The implementation, innermost in every chain. */
const implementation: AnyFn = async (req) => {
  const call = (req as CallRequest)[callOf];
  if (req.stream || call === undefined) {
    // An interceptor built a request of its own instead of passing (or spreading) the call's.
    throw new ConnectError("an interceptor replaced the call's request", Code.Internal);
  }
  const { spec, context } = call;
  const output = await spec.impl(req.message as never, contextFor(call, req));
  return {
    stream: false,
    message: create(spec.method.output as DescMessage, output as never),
    method: spec.method,
    service: spec.method.parent,
    header: context.responseHeader,
    trailer: context.responseTrailer,
  };
};

const chains = new WeakMap<readonly Interceptor[], AnyFn>();

/** `interceptors` around the implementation, the first outermost, composed once per list. */
function chainOf(interceptors: readonly Interceptor[]): AnyFn {
  let chain = chains.get(interceptors);
  if (chain === undefined) {
    chain = interceptors.reduceRight<AnyFn>((next, i) => i(next) as AnyFn, implementation);
    chains.set(interceptors, chain);
  }
  return chain;
}

/** Replaces `to`'s entries with `from`'s (an interceptor answered headers of its own). */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  from.forEach((value, key) => {
    to.append(key, value);
  });
}

/** Calls `spec`'s implementation with `input` through `interceptors`: its output message. */
export async function invokeUnary(
  spec: UnarySpec,
  context: UnaryContext,
  input: Message,
  interceptors: readonly Interceptor[],
): Promise<Message> {
  const req = new UnaryCall({ spec, context }, input);
  const res = await chainOf(interceptors)(req);
  copyHeaders(res.header, context.responseHeader);
  copyHeaders(res.trailer, context.responseTrailer);
  return res.message as Message;
}
