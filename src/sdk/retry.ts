/**
 * The SDK's one retry policy: which failures pass with time, and how long to wait before the
 * next try (the server's Retry-After when it gave one; else between half the ceiling and all of
 * it, a ceiling that doubles from 200 ms to 5 s: jittered, yet never next to nothing, so that five
 * retries span at least 3.1 s, a serving process's replacement included). A publish retries
 * under its idempotency key (herald.ts); a question's wait polls again (ask.ts).
 */
import type { HeraldError } from "./errors.ts";

/** Transient: the server was not reached, was restarting, or asked to slow down. */
export function transient(e: HeraldError): boolean {
  if (["network", "unavailable", "deadline_exceeded", "idempotency_key_in_use"].includes(e.code)) {
    return true;
  }
  // A rate limit passes; a monthly quota does not, within a retry budget.
  return e.code === "rate_limited";
}

/** How long to wait before try number `attempt + 1` (attempt counts from 0). */
export function retryDelayMs(e: HeraldError, attempt: number): number {
  const ceiling = Math.min(5_000, 200 * 2 ** attempt);
  return Math.max(e.retryAfterMs ?? 0, (ceiling / 2) * (1 + Math.random()));
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
