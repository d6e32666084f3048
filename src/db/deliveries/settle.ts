/**
 * The settle: the outcomes of many sends recorded in one statement (a worker's sends finish
 * together, and a thousand single-row updates would cost a thousand round trips).
 */
import { bound, type Db } from "../orm.ts";

export type Outcome =
  | { state: "sent" }
  | { state: "failed" | "expired"; error: string }
  | { state: "pending"; error: string; nextAttemptAt: Date };

/** A copy's `last_error` when its publisher canceled it (the cancel, the settle, the claim). */
export const canceledByPublisher = "canceled by the publisher";

export interface DeliveryKey {
  notification_id: string;
  device_id: string;
}

/**
 * Records each outcome on its still-pending delivery and releases the lease. A copy its
 * publisher canceled while it was on the wire is not tried again: a retry becomes `canceled`.
 */
export async function settle(
  db: Db,
  items: readonly { delivery: DeliveryKey; outcome: Outcome }[],
): Promise<void> {
  if (items.length === 0) return;
  const rows = items.map(({ delivery: d, outcome: o }) => ({
    n: d.notification_id,
    d: d.device_id,
    s: o.state,
    e: o.state === "sent" ? "" : o.error,
    t: o.state === "pending" ? o.nextAttemptAt.toISOString() : null,
  }));
  await bound(
    db,
    `update delivery d set locked_until = null, updated_at = now(), cancel_requested = false,
            state = case when o.s = 'pending' and d.cancel_requested then 'canceled' else o.s end,
            last_error = case when o.s = 'pending' and d.cancel_requested
                              then '${canceledByPublisher}' else o.e end,
            next_attempt_at = coalesce(o.t, d.next_attempt_at),
            sent_at = case when o.s = 'sent' then now() else d.sent_at end
       from json_to_recordset($1::json) as o(n uuid, d uuid, s text, e text, t timestamptz)
      where d.notification_id = o.n and d.device_id = o.d and d.state = 'pending'`,
    [JSON.stringify(rows)],
  );
}
