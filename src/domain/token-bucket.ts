/**
 * An in-memory token bucket per key: `burst` tokens, refilled at `perSecond`. Buckets live in
 * this process only; with N processes behind a balancer a client gets up to N times the rate
 * (docs/auth.md). Idle buckets are dropped once full again, so memory follows active callers.
 */
import { monotonicMs } from "./clock.ts";
export interface TakeResult {
  allowed: boolean;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until one token is available (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

/** The answer of a bucket holding `tokens` (after the take, if one was taken). */
export function takeResult(
  tokens: number,
  allowed: boolean,
  burst: number,
  perSecond: number,
): TakeResult {
  return {
    allowed,
    remaining: Math.floor(tokens),
    retryAfterSeconds: allowed ? 0 : Math.ceil((1 - tokens) / perSecond),
    resetSeconds: Math.ceil((burst - tokens) / perSecond),
  };
}

/** What the rate-limit interceptor needs of a limiter: this process's, or the shared one. */
export interface RateLimiter {
  readonly burst: number;
  readonly perSecond: number;
  take(key: string): TakeResult | Promise<TakeResult>;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TokenBucketLimiter implements RateLimiter {
  readonly burst: number;
  readonly perSecond: number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(burst: number, perSecond: number, now: () => number = monotonicMs) {
    this.burst = burst;
    this.perSecond = perSecond;
    this.#now = now;
  }

  /** Takes one token if there is one. */
  take(key: string): TakeResult {
    return this.#use(key, true);
  }

  /** Tells whether a token is there, without taking it. */
  peek(key: string): TakeResult {
    return this.#use(key, false);
  }

  #use(key: string, consume: boolean): TakeResult {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.burst, updatedMs: now };
    bucket.tokens = Math.min(
      this.burst,
      bucket.tokens + ((now - bucket.updatedMs) / 1000) * this.perSecond,
    );
    bucket.updatedMs = now;
    const allowed = bucket.tokens >= 1;
    if (allowed && consume) bucket.tokens -= 1;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > 10_000) this.#sweep(now);
    return takeResult(bucket.tokens, allowed, this.burst, this.perSecond);
  }

  #sweep(now: number): void {
    for (const [key, b] of this.#buckets) {
      if (b.tokens + ((now - b.updatedMs) / 1000) * this.perSecond >= this.burst) {
        this.#buckets.delete(key);
      }
    }
  }
}
