/**
 * Failed password logins are limited per account (email) and per client address, so that
 * guessing is slow against one account and from one address. Only failures spend tokens: a
 * correct password is never refused while tokens remain. The buckets are this process's own by
 * default; the server gives shared ones (PostgreSQL, db/repositories/rate-limits.ts) so that the
 * limits hold however many processes serve.
 */
import { type TakeResult, TokenBucketLimiter } from "./token-bucket.ts";

export interface LoginLimits {
  /** Failures per account: a bucket of this many, refilled one per minute. */
  failuresPerAccount: number;
  /** Failures per client address: a bucket of this many, refilled one per 10 s. */
  failuresPerAddress: number;
}

/** Token buckets by key: peek to see, take to spend. */
export interface Buckets {
  peek(key: string): TakeResult | Promise<TakeResult>;
  take(key: string): TakeResult | Promise<TakeResult>;
}

/** Makes the buckets of one limit: `burst` tokens, refilled at `perSecond`, named `name`. */
export type BucketsFactory = (name: string, burst: number, perSecond: number) => Buckets;

export class LoginLimiter {
  readonly #perAccount: Buckets;
  readonly #perAddress: Buckets;

  constructor(limits: LoginLimits, now?: () => number, buckets?: BucketsFactory) {
    const make: BucketsFactory =
      buckets ?? ((_name, burst, perSecond) => new TokenBucketLimiter(burst, perSecond, now));
    this.#perAccount = make("login-account", limits.failuresPerAccount, 1 / 60);
    this.#perAddress = make("login-address", limits.failuresPerAddress, 1 / 10);
  }

  /** Seconds to wait before trying again, or undefined when a try is allowed. */
  async blocked(email: string, address: string): Promise<number | undefined> {
    const [a, b] = await Promise.all([
      this.#perAccount.peek(email.toLowerCase()),
      this.#perAddress.peek(address),
    ]);
    if (a.allowed && b.allowed) return undefined;
    return Math.max(a.retryAfterSeconds, b.retryAfterSeconds);
  }

  async failed(email: string, address: string): Promise<void> {
    await Promise.all([this.#perAccount.take(email.toLowerCase()), this.#perAddress.take(address)]);
  }
}
