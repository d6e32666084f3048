/**
 * A notification's status as the API reports it, from its stored status and its deliveries'
 * states: `scheduled`, `canceled` (a scheduled one canceled whole), `queued` and `no_devices`
 * are stored; otherwise `delivering` while any delivery is
 * pending. Once none is: `delivered` when every device has it in hand (fetched, acknowledged or
 * opened), `sent` when every device's provider or stream accepted it but some device has not
 * confirmed it yet, `failed` or `expired` when no device got it, and `partially_delivered` or
 * `partially_sent` in between (some devices failed; the others confirmed, or merely accepted).
 * `delivered` is never claimed on a provider's word alone (docs/delivery.md, "States").
 */
export function rollupStatus(stored: string, counts: Record<string, number>): string {
  if (stored === "queued" || stored === "no_devices" || stored === "scheduled") return stored;
  if (stored === "canceled") return stored;
  const n = (s: string) => counts[s] ?? 0;
  if (n("pending") > 0) return "delivering";
  const confirmed = n("delivered") + n("opened");
  const accepted = n("sent");
  const bad = n("failed") + n("expired");
  if (bad === 0) {
    if (accepted > 0) return "sent";
    return confirmed > 0 ? "delivered" : stored;
  }
  if (confirmed + accepted === 0) return n("failed") === 0 ? "expired" : "failed";
  return accepted > 0 ? "partially_sent" : "partially_delivered";
}
