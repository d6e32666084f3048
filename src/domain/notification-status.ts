/**
 * A notification's status as the API reports it, from its stored status and its deliveries'
 * states: `queued` and `no_devices` are stored; otherwise `delivering` while any delivery is
 * pending, `delivered` when every device got it (sent, delivered or opened), `failed` or
 * `expired` when none did, and `partially_delivered` in between.
 */
export function rollupStatus(stored: string, counts: Record<string, number>): string {
  if (stored === "queued" || stored === "no_devices") return stored;
  const n = (s: string) => counts[s] ?? 0;
  if (n("pending") > 0) return "delivering";
  const ok = n("sent") + n("delivered") + n("opened");
  const bad = n("failed") + n("expired");
  if (bad === 0) return ok > 0 ? "delivered" : stored;
  if (ok === 0) return n("failed") === 0 ? "expired" : "failed";
  return "partially_delivered";
}
