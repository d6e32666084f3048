/**
 * The claim: due push deliveries are leased to one worker with FOR UPDATE SKIP LOCKED, so
 * several workers share the queue without waiting on each other. A claim's lease is what lets
 * another worker pick up what a dead one left. Raw SQL: one set-based statement per round.
 */
import type { StoredAction } from "../../domain/actions.ts";
import type { Db } from "../orm.ts";

/** A leased push delivery with what its sender needs: the notification and the sealed token. */
export interface DueDelivery {
  notification_id: string;
  device_id: string;
  platform: string;
  attempts: number;
  topic: string;
  title: string;
  message: string;
  priority: string;
  click_url: string | null;
  /** It asks for acknowledgement and has none yet (a web push shows an Acknowledge button). */
  awaits_ack: boolean;
  /** Its buttons while nobody answered (null when none, or answered). */
  actions: StoredAction[] | null;
  created_at: Date;
  expires_at: Date | null;
  /** The device's sealed push token (see PushTokenKeyRing), or null when it has none. */
  token_key_id: string | null;
  token_box: Buffer | null;
}

/** Claims up to `limit` push deliveries that are due, leasing them for `leaseSeconds`. */
export async function claimDue(
  db: Db,
  limit: number,
  leaseSeconds: number,
): Promise<DueDelivery[]> {
  const rows = await db.execute<Record<string, unknown>[]>(
    `with due as (
       select notification_id, device_id from delivery
        where state = 'pending' and platform <> 'stream' and next_attempt_at <= now()
          and (locked_until is null or locked_until < now())
        order by next_attempt_at limit ? for update skip locked
     ), claimed as (
       update delivery d set locked_until = now() + make_interval(secs => ?),
              attempts = d.attempts + 1, updated_at = now()
         from due where d.notification_id = due.notification_id and d.device_id = due.device_id
       returning d.notification_id, d.device_id, d.platform, d.attempts
     )
     select c.*, n.topic, n.title, n.message, n.priority, n.click_url, n.created_at, n.expires_at,
            (n.require_ack and n.acknowledged_at is null) as awaits_ack,
            case when n.acknowledged_at is null then n.actions end as actions,
            dv.token_key_id, dv.token_box
       from claimed c join notification n on n.id = c.notification_id
       join device dv on dv.id = c.device_id`,
    [limit, leaseSeconds],
  );
  return rows.map((r) => ({
    ...(r as unknown as DueDelivery),
    created_at: new Date(r.created_at as string),
    expires_at: r.expires_at ? new Date(r.expires_at as string) : null,
  }));
}
