/**
 * Failed password logins are limited per account (email), so that guessing one account is slow
 * from anywhere, and, with every other failed authentication, per client address (failed-auth.ts).
 * Only failures spend tokens: a correct password is never refused while tokens remain. The
 * account buckets are this process's own by default; the server gives shared ones (PostgreSQL,
 * db/policies/rate-limits.ts) so that the limits hold however many processes serve.
 */
import type { FailedAuthThrottle } from "./failed-auth.ts";
import { type TakeResult, TokenBucketLimiter } from "./token-bucket.ts";

/** Token buckets by key: peek to see, take to spend. */
export interface Buckets {
  peek(key: string): TakeResult | Promise<TakeResult>;
  take(key: string): TakeResult | Promise<TakeResult>;
}

/** Makes the buckets of one limit: `burst` tokens, refilled at `perSecond`, named `name`. */
export type BucketsFactory = (name: string, burst: number, perSecond: number) => Buckets;

export class LoginLimiter {
  readonly addresses: FailedAuthThrottle;
  readonly #perAccount: Buckets;

  /** `failuresPerAccount`: a bucket of this many per account, refilled one per minute. */
  constructor(
    failuresPerAccount: number,
    addresses: FailedAuthThrottle,
    now?: () => number,
    buckets?: BucketsFactory,
  ) {
    const make: BucketsFactory =
      buckets ?? ((_name, burst, perSecond) => new TokenBucketLimiter(burst, perSecond, now));
    this.#perAccount = make("login-account", failuresPerAccount, 1 / 60);
    this.addresses = addresses;
  }

  /** Seconds to wait before trying again, or undefined when a try is allowed. */
  async blocked(email: string, address: string): Promise<number | undefined> {
    const fromAddress = this.addresses.blockedFor(address);
    if (fromAddress !== undefined) return fromAddress;
    const a = await this.#perAccount.peek(email.toLowerCase());
    return a.allowed ? undefined : a.retryAfterSeconds;
  }

  async failed(email: string, address: string): Promise<void> {
    await Promise.all([this.#perAccount.take(email.toLowerCase()), this.addresses.failed(address)]);
  }
}
