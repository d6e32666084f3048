/**
 * A unary call's context (Connect's `HandlerContext`), for the two paths that invoke an
 * implementation themselves: the REST shim (and the hooks that publish through it) and the
 * gRPC unary handler. Connect's `createHandlerContext` makes, per call, two AbortControllers
 * linked by listeners on four signals (a deadline's, the request's, the server's shutdown and
 * its own), a copy of the request's Headers, and at the end an abort that runs through all of
 * them (profiled: ~4 % of a publish's CPU). Here a call has at most one AbortController, made
 * when something first asks for the call's signal (a publish never does: invoke.ts), aborted by
 * the request's signal (the client went away; given as a function, it too is made only then),
 * its deadline, the server's shutdown (one listener for every call under way) or the call's
 * end, whichever came first, even before it was made; the request's Headers are the call's own.
 * What a handler sees is Connect's contract.
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";

export interface UnaryContext extends HandlerContext {
  /** Ends the call's signal with `reason` (the call is over, or failed). */
  abort(reason?: unknown): void;
}

export interface UnaryContextInit {
  service: DescService;
  method: DescMethod;
  protocolName: string;
  requestMethod: string;
  url: string;
  timeoutMs?: number;
  shutdownSignal: AbortSignal;
  /** Aborted when the client goes away; or what makes it, asked only with the call's signal. */
  requestSignal?: AbortSignal | (() => AbortSignal);
  /** The call's own request headers (not copied: nothing else holds them). */
  requestHeader: Headers;
  responseHeader?: Record<string, string>;
  responseTrailer?: Record<string, string>;
  contextValues?: ContextValues;
}

/** The calls under way per shutdown signal: one listener aborts them all. */
const live = new WeakMap<AbortSignal, Set<AbortController>>();

function callsOf(shutdown: AbortSignal): Set<AbortController> {
  let calls = live.get(shutdown);
  if (calls === undefined) {
    const set = new Set<AbortController>();
    calls = set;
    live.set(shutdown, set);
    shutdown.addEventListener(
      "abort",
      () => {
        for (const c of set) c.abort(shutdown.reason);
        set.clear();
      },
      { once: true },
    );
  }
  return calls;
}

const timedOut = () => new ConnectError("the operation timed out", Code.DeadlineExceeded);

export function unaryContext(init: UnaryContextInit): UnaryContext {
  const { shutdownSignal: shutdown, timeoutMs } = init;
  let request: AbortSignal | undefined;
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  let controller: AbortController | undefined;
  /** The calls under way with this shutdown, once this one has a controller among them. */
  let calls: Set<AbortController> | undefined;
  let ended: { reason: unknown } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const end = (reason: unknown) => {
    if (ended) return;
    ended = { reason };
    if (controller === undefined) return;
    if (timer !== undefined) clearTimeout(timer);
    calls?.delete(controller);
    request?.removeEventListener("abort", onRequestAbort);
    if (!controller.signal.aborted) controller.abort(reason);
  };
  function onRequestAbort() {
    end(request?.reason);
  }
  // Made when first asked for (most calls never do: a publish does not), with what happened
  // to the call so far.
  const signal = () => {
    if (controller !== undefined) return controller.signal;
    const c = new AbortController();
    controller = c;
    const r = init.requestSignal;
    request = typeof r === "function" ? r() : r;
    const left = deadline === undefined ? undefined : deadline - Date.now();
    if (ended) c.abort(ended.reason);
    else if (shutdown.aborted) end(shutdown.reason);
    else if (request?.aborted) end(request.reason);
    else if (left !== undefined && left <= 0) end(timedOut());
    else {
      calls = callsOf(shutdown);
      calls.add(c);
      request?.addEventListener("abort", onRequestAbort);
      if (left !== undefined) timer = setTimeout(() => end(timedOut()), left);
    }
    return c.signal;
  };
  return {
    service: init.service,
    method: init.method,
    protocolName: init.protocolName,
    requestMethod: init.requestMethod,
    url: init.url,
    get signal() {
      return signal();
    },
    timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
    requestHeader: init.requestHeader,
    responseHeader: new Headers(init.responseHeader),
    responseTrailer: new Headers(init.responseTrailer),
    values: init.contextValues ?? createContextValues(),
    abort: end,
  };
}
