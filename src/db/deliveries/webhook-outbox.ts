/**
 * The webhook outbox's work queue: claiming due deliveries with a lease (a worker that dies
 * leaves its leases to expire and another sends them, with the same event id), within the caps
 * on sends in flight per endpoint and per account, and recording each attempt in one statement.
 */
import type { NotificationRecord } from "../../domain/notification.ts";
import { notificationColumns, notificationValues, placeholders } from "../notifications/codec.ts";
import { bound, type Db } from "../orm.ts";

export interface DueWebhook {
  event_id: string;
  endpoint_id: string;
  project_id: string;
  description: string;
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

export interface WebhookCaps {
  /** Sends in flight at once to one endpoint, across every process. */
  perEndpoint: number;
  /** Sends in flight at once for one account's endpoints, across every process. */
  perAccount: number;
}

/**
 * Leases up to `limit` due deliveries, never more than the caps allow in flight: a lease not
 * yet settled is a send in flight, in whichever process. Claims are serialized across processes
 * by an advisory lock held for the claim's transaction (its second statement sees the leases of
 * the claim before it), so the caps hold. Each endpoint offers its oldest due deliveries, each
 * account its oldest among those, and the oldest of all go first: a slow receiver of one account
 * holds at most `perAccount` sends, whatever its number of endpoints and events.
 *
 * A read asks first whether any enabled endpoint has a delivery due: with none, the claim's
 * transaction (four statements under a lock every process takes) is not begun. Idle, that was
 * most of what a serving process asked of PostgreSQL (docs/operations.md, "Database").
 */
export async function claimDueWebhooks(
  db: Db,
  limit: number,
  leaseSeconds: number,
  caps: WebhookCaps,
): Promise<DueWebhook[]> {
  const [probe] = await bound<{ due: boolean }>(db, probeSql, [], "herald_webhook_probe");
  if (!probe?.due) return [];
  return db.transactional(async (trx) => {
    await db.execute(
      "select pg_advisory_xact_lock(hashtext('herald.webhook-claim'))",
      [],
      "all",
      trx,
    );
    return db.execute<DueWebhook[]>(
      claimSql,
      [caps.perEndpoint, caps.perAccount, limit, leaseSeconds],
      "all",
      trx,
    );
  });
}

/** Of webhook delivery `d`: its attempt is due and no live lease holds it (the claim's, and the probe's). */
const webhookDueOf = (d: string) => `${d}.state = 'pending' and ${d}.next_attempt_at <= now()
           and (${d}.locked_until is null or ${d}.locked_until < now())`;

const probeSql = `select exists (
  select 1 from webhook_delivery d join webhook_endpoint w on w.id = d.endpoint_id
   where w.enabled and ${webhookDueOf("d")}) as due`;

const claimSql = `
  with busy as (
    select endpoint_id, count(*)::int as n from webhook_delivery
     where state = 'pending' and locked_until > now() group by endpoint_id
  ), endpoint as (
    select w.id, p.account_id, coalesce(b.n, 0) as busy
      from webhook_endpoint w join project p on p.id = w.project_id
      left join busy b on b.endpoint_id = w.id
     where w.enabled
  ), account_busy as (
    select account_id, sum(busy)::int as n from endpoint group by account_id
  ), offered as (
    select c.event_id, c.endpoint_id, e.account_id, c.next_attempt_at
      from endpoint e cross join lateral (
        select d.event_id, d.endpoint_id, d.next_attempt_at from webhook_delivery d
         where d.endpoint_id = e.id and ${webhookDueOf("d")}
         order by d.next_attempt_at limit greatest(0, ?::int - e.busy)
      ) c
  ), ranked as (
    select o.*, row_number() over (partition by o.account_id order by o.next_attempt_at) as r,
           a.n as account_busy
      from offered o join account_busy a on a.account_id = o.account_id
  ), chosen as (
    select event_id, endpoint_id from ranked where r <= ?::int - account_busy
     order by next_attempt_at limit ?
  ), leased as (
    update webhook_delivery d set locked_until = now() + make_interval(secs => ?)
      from chosen where d.event_id = chosen.event_id and d.endpoint_id = chosen.endpoint_id
    returning d.event_id, d.endpoint_id, d.attempts
  )
  select l.event_id, l.endpoint_id, w.project_id, w.description, l.attempts, ev.payload,
         ev.created_at as event_created_at, w.url, w.secret_key_id, w.secret_box,
         w.previous_key_id, w.previous_box, w.previous_until
    from leased l join webhook_event ev on ev.id = l.event_id
    join webhook_endpoint w on w.id = l.endpoint_id`;

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

/** The notice of a disabled endpoint, inserted by the statement that disables it. */
const noticeOf = `, notice as (
       insert into notification (${notificationColumns})
       select ${placeholders} from endpoint where disabled is not null
     )`;

/**
 * Records an attempt, moves the delivery on (succeeded, retry, failed) and keeps the endpoint's
 * run of failures: reset by a success, and at `disableAfter` the endpoint is disabled with the
 * reason, and `notice` (given with a failure) is published to the account's devices in the same
 * statement (domain/webhook-disabled.ts).
 */
export async function settleWebhook(
  db: Db,
  o: WebhookOutcome,
  disableAfter: number,
  notice?: NotificationRecord,
): Promise<{ disabled: { projectId: string; reason: string } | undefined }> {
  // The settle that disables the endpoint is the one its failures reach `disableAfter` with
  // (enabling sets them back to 0; later failures, of sends in flight, count past it).
  const [row] = await db.execute<{ project_id: string; disabled: string | null }[]>(
    `with attempt as (
       insert into webhook_attempt (event_id, endpoint_id, status_code, error, duration_ms)
       values (?, ?, ?, ?, ?)
     ), delivery as (
       update webhook_delivery set attempts = attempts + 1, locked_until = null,
              state = case when ?::boolean then 'succeeded'
                           when ?::timestamptz is null then 'failed' else 'pending' end,
              next_attempt_at = coalesce(?::timestamptz, next_attempt_at)
        where event_id = ? and endpoint_id = ?
     ), endpoint as (
       update webhook_endpoint set
         consecutive_failures = case when ?::boolean then 0 else consecutive_failures + 1 end,
         enabled = enabled and (?::boolean or consecutive_failures + 1 < ?),
         disabled_reason = case
           when enabled and not ?::boolean and consecutive_failures + 1 >= ?
             then format('disabled after %s failed attempts in a row; the last: %s',
                         consecutive_failures + 1, ?::text)
           else disabled_reason end
       where id = ?
       returning project_id,
                 case when not enabled and consecutive_failures = ? then disabled_reason end
                   as disabled
     )${notice ? noticeOf : ""}
     select project_id, disabled from endpoint`,
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
      disableAfter,
      ...(notice ? notificationValues(notice) : []),
    ],
  );
  return {
    disabled: row?.disabled ? { projectId: row.project_id, reason: row.disabled } : undefined,
  };
}
