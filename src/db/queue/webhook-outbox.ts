/**
 * The webhook outbox's work queue: claiming due deliveries with a lease (`FOR UPDATE SKIP
 * LOCKED`, like push deliveries: a worker that dies leaves its leases to expire and another
 * sends them, with the same event id), and recording each attempt in one statement.
 */
import type { Db } from "../orm.ts";

export interface DueWebhook {
  event_id: string;
  endpoint_id: string;
  attempts: number;
  payload: unknown;
  event_created_at: Date;
  url: string;
  secret_key_id: string;
  secret_box: Buffer;
  previous_key_id: string | null;
  previous_box: Buffer | null;
  previous_until: Date | null;
}

export async function claimDueWebhooks(
  db: Db,
  limit: number,
  leaseSeconds: number,
): Promise<DueWebhook[]> {
  return db.execute<DueWebhook[]>(
    `with due as (
       select d.event_id, d.endpoint_id from webhook_delivery d
         join webhook_endpoint w on w.id = d.endpoint_id and w.enabled
        where d.state = 'pending' and d.next_attempt_at <= now()
          and (d.locked_until is null or d.locked_until < now())
        order by d.next_attempt_at limit ? for update of d skip locked
     ), leased as (
       update webhook_delivery d set locked_until = now() + make_interval(secs => ?)
         from due where d.event_id = due.event_id and d.endpoint_id = due.endpoint_id
       returning d.event_id, d.endpoint_id, d.attempts
     )
     select l.event_id, l.endpoint_id, l.attempts, ev.payload, ev.created_at as event_created_at,
            w.url, w.secret_key_id, w.secret_box, w.previous_key_id, w.previous_box,
            w.previous_until
       from leased l join webhook_event ev on ev.id = l.event_id
       join webhook_endpoint w on w.id = l.endpoint_id`,
    [limit, leaseSeconds],
  );
}

export interface WebhookOutcome {
  eventId: string;
  endpointId: string;
  statusCode: number;
  error: string;
  durationMs: number;
  ok: boolean;
  /** When to try again; undefined: give up (or done, when ok). */
  retryAt?: Date;
}

/**
 * Records an attempt, moves the delivery on (succeeded, retry, failed) and keeps the endpoint's
 * run of failures: reset by a success, and at `disableAfter` the endpoint is disabled with the
 * reason.
 */
export async function settleWebhook(db: Db, o: WebhookOutcome, disableAfter: number) {
  await db.execute(
    `with attempt as (
       insert into webhook_attempt (event_id, endpoint_id, status_code, error, duration_ms)
       values (?, ?, ?, ?, ?)
     ), delivery as (
       update webhook_delivery set attempts = attempts + 1, locked_until = null,
              state = case when ?::boolean then 'succeeded'
                           when ?::timestamptz is null then 'failed' else 'pending' end,
              next_attempt_at = coalesce(?::timestamptz, next_attempt_at)
        where event_id = ? and endpoint_id = ?
     )
     update webhook_endpoint set
       consecutive_failures = case when ?::boolean then 0 else consecutive_failures + 1 end,
       enabled = enabled and (?::boolean or consecutive_failures + 1 < ?),
       disabled_reason = case
         when enabled and not ?::boolean and consecutive_failures + 1 >= ?
           then format('disabled after %s failed attempts in a row; the last: %s',
                       consecutive_failures + 1, ?::text)
         else disabled_reason end
     where id = ?`,
    [
      o.eventId,
      o.endpointId,
      o.statusCode,
      o.error,
      o.durationMs,
      o.ok,
      o.retryAt ?? null,
      o.retryAt ?? null,
      o.eventId,
      o.endpointId,
      o.ok,
      o.ok,
      disableAfter,
      o.ok,
      disableAfter,
      o.error,
      o.endpointId,
    ],
  );
}
