/**
 * Failed password logins are limited per account (email) and per client address, so that
 * guessing is slow against one account and from one address. Only failures spend tokens: a
 * correct password is never refused while tokens remain.
 */
import { TokenBucketLimiter } from "./token-bucket.ts";

export interface LoginLimits {
  /** Failures per account: a bucket of this many, refilled one per minute. */
  failuresPerAccount: number;
  /** Failures per client address: a bucket of this many, refilled one per 10 s. */
  failuresPerAddress: number;
}

export class LoginLimiter {
  readonly #perAccount: TokenBucketLimiter;
  readonly #perAddress: TokenBucketLimiter;

  constructor(limits: LoginLimits, now?: () => number) {
    this.#perAccount = new TokenBucketLimiter(limits.failuresPerAccount, 1 / 60, now);
    this.#perAddress = new TokenBucketLimiter(limits.failuresPerAddress, 1 / 10, now);
  }

  /** Seconds to wait before trying again, or undefined when a try is allowed. */
  blocked(email: string, address: string): number | undefined {
    const a = this.#perAccount.peek(email.toLowerCase());
    const b = this.#perAddress.peek(address);
    if (a.allowed && b.allowed) return undefined;
    return Math.max(a.retryAfterSeconds, b.retryAfterSeconds);
  }

  failed(email: string, address: string): void {
    this.#perAccount.take(email.toLowerCase());
    this.#perAddress.take(address);
  }
}
