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
 * end, whichever came first, even before it was made; the request's Headers are the call's own,
 * and the response's headers and trailers are kept in plain records (call-headers.ts). What a
 * handler sees is Connect's contract.
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import { monotonicMs } from "../domain/clock.ts";
import { CallHeaders } from "./call-headers.ts";

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

/**
 * A class, its `signal` a getter on the prototype: an object literal's `get signal()` made a
 * getter closure per call, which V8 keeps in the object's hidden class (an accessor is part of
 * it, so every call's object had a map of its own); maps live in the old generation, so each
 * call's closure, and through it its request, reply and headers, outlived every scavenge until
 * a mark-compact (measured: 1.9-2.3 MB promoted a scavenge at 500/s, against 70 KB without the
 * getter; BENCHMARKS.md, twenty-third session).
 */
class CallContext implements UnaryContext {
  readonly service: DescService;
  readonly method: DescMethod;
  readonly protocolName: string;
  readonly requestMethod: string;
  readonly url: string;
  readonly requestHeader: Headers;
  readonly responseHeader: Headers;
  readonly responseTrailer: Headers;
  readonly values: ContextValues;
  readonly #init: UnaryContextInit;
  readonly #deadline: number | undefined;
  #controller: AbortController | undefined;
  /** The calls under way with this shutdown, once this one has a controller among them. */
  #calls: Set<AbortController> | undefined;
  #request: AbortSignal | undefined;
  #onRequestAbort: (() => void) | undefined;
  #ended: { reason: unknown } | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(init: UnaryContextInit) {
    this.#init = init;
    this.#deadline = init.timeoutMs === undefined ? undefined : monotonicMs() + init.timeoutMs;
    this.service = init.service;
    this.method = init.method;
    this.protocolName = init.protocolName;
    this.requestMethod = init.requestMethod;
    this.url = init.url;
    this.requestHeader = init.requestHeader;
    this.responseHeader = new CallHeaders(undefined, undefined, init.responseHeader);
    this.responseTrailer = new CallHeaders(undefined, undefined, init.responseTrailer);
    this.values = init.contextValues ?? createContextValues();
  }

  // Made when first asked for (most calls never do: a publish does not), with what happened
  // to the call so far.
  get signal(): AbortSignal {
    if (this.#controller !== undefined) return this.#controller.signal;
    const c = new AbortController();
    this.#controller = c;
    const shutdown = this.#init.shutdownSignal;
    const r = this.#init.requestSignal;
    const request = typeof r === "function" ? r() : r;
    this.#request = request;
    const left = this.timeoutMs();
    if (this.#ended) c.abort(this.#ended.reason);
    else if (shutdown.aborted) this.abort(shutdown.reason);
    else if (request?.aborted) this.abort(request.reason);
    else if (left !== undefined && left <= 0) this.abort(timedOut());
    else {
      this.#calls = callsOf(shutdown);
      this.#calls.add(c);
      if (request) {
        this.#onRequestAbort = () => this.abort(request.reason);
        request.addEventListener("abort", this.#onRequestAbort);
      }
      if (left !== undefined) this.#timer = setTimeout(() => this.abort(timedOut()), left);
    }
    return c.signal;
  }

  timeoutMs(): number | undefined {
    return this.#deadline === undefined ? undefined : this.#deadline - monotonicMs();
  }

  abort(reason?: unknown): void {
    if (this.#ended) return;
    this.#ended = { reason };
    const controller = this.#controller;
    if (controller === undefined) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#calls?.delete(controller);
    if (this.#onRequestAbort) this.#request?.removeEventListener("abort", this.#onRequestAbort);
    if (!controller.signal.aborted) controller.abort(reason);
  }
}

export function unaryContext(init: UnaryContextInit): UnaryContext {
  return new CallContext(init);
}
