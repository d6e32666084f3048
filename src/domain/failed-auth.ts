/**
 * Failed authentications per client address (PRODUCT.md): unknown or bad credentials, wrong
 * passwords, pairing codes and device codes all count. Past the limit within a minute of the
 * first failure, the address gets 429 until that minute ends, answered from this process's
 * memory without a database lookup. The count is shared by every process (db/repositories/
 * rate-limits.ts) so the limit holds however many serve; a process learns of a block the first
 * time that address fails on it.
 */
import { monotonicMs } from "./clock.ts";

/** Counts one failure of `address`; says the count in its window and when the window ends. */
export type FailureCounter = (address: string) => Promise<{ count: number; resetMs: number }>;

export class FailedAuthThrottle {
  readonly limit: number;
  readonly #count: FailureCounter;
  readonly #now: () => number;
  /** Blocked addresses and when their minute ends (`monotonicMs`). */
  readonly #blocked = new Map<string, number>();

  constructor(limit: number, count?: FailureCounter, now: () => number = monotonicMs) {
    this.limit = limit;
    this.#now = now;
    this.#count = count ?? memoryCounter(now);
  }

  /** Seconds until the address may try again, or undefined when it may now. No I/O. */
  blockedFor(address: string): number | undefined {
    const until = this.#blocked.get(address);
    if (until === undefined) return undefined;
    const left = until - this.#now();
    if (left > 0) return Math.ceil(left / 1000);
    this.#blocked.delete(address);
    return undefined;
  }

  /** Records a failure; from the limit's count on, the address is blocked for the window. */
  async failed(address: string): Promise<void> {
    const { count, resetMs } = await this.#count(address);
    if (count < this.limit) return;
    this.#blocked.set(address, this.#now() + resetMs);
    if (this.#blocked.size > 100_000) this.#forgetEnded();
  }

  #forgetEnded(): void {
    const now = this.#now();
    for (const [address, until] of this.#blocked) if (until <= now) this.#blocked.delete(address);
  }
}

/** This process's own count: a window of a minute from each address's first failure. */
function memoryCounter(now: () => number): FailureCounter {
  const windows = new Map<string, { start: number; count: number }>();
  return async (address) => {
    const t = now();
    let w = windows.get(address);
    if (!w || t - w.start >= 60_000) {
      w = { start: t, count: 0 };
      windows.set(address, w);
      if (windows.size > 100_000) {
        for (const [a, x] of windows) if (t - x.start >= 60_000) windows.delete(a);
      }
    }
    w.count += 1;
    return { count: w.count, resetMs: w.start + 60_000 - t };
  };
}
