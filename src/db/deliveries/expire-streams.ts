/**
 * Stream deliveries whose notification's ttl passed before the device connected become
 * `expired` (push deliveries expire in the worker, which knows when it last tried). One
 * set-based update, run by the worker every few seconds.
 */
import type { Db } from "../orm.ts";

/** Expires them (without a ttl, after 24 hours, as pushes); returns how many. */
export async function expireStreamDeliveries(db: Db): Promise<number> {
  const res = await db.execute<{ affectedRows: number }>(
    `update delivery d set state = 'expired', last_error = 'ttl passed before the device connected',
            updated_at = now()
       from notification n
      where n.id = d.notification_id and d.state = 'pending' and d.platform = 'stream'
        and coalesce(n.expires_at, n.created_at + interval '24 hours') <= now()`,
    [],
    "run",
  );
  return res.affectedRows;
}
