/**
 * When to try a failed push again: exponential backoff with full jitter (AWS architecture blog),
 * never sooner than the provider's Retry-After, and never past the delivery's deadline.
 */
export const retryBaseMs = 1_000;
export const retryCapMs = 5 * 60_000;
/** Without a ttl, a delivery is given up 24 hours after the notification was created. */
export const noTtlDeadlineMs = 24 * 3600_000;

export function backoffMs(attempt: number, retryAfterMs = 0, random = Math.random): number {
  const ceiling = Math.min(retryCapMs, retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.max(retryAfterMs, Math.floor(random() * ceiling));
}

/** The instant after which a delivery is not attempted any more. */
export function deadline(createdAt: Date, expiresAt: Date | null): Date {
  return expiresAt ?? new Date(createdAt.getTime() + noTtlDeadlineMs);
}
