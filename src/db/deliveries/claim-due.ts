/**
 * The claim: due push deliveries are leased to one worker with FOR UPDATE SKIP LOCKED, so
 * several workers share the queue without waiting on each other. A claim's lease is what lets
 * another worker pick up what a dead one left. Raw SQL: one set-based statement per round.
 */
import type { StoredAction } from "../../domain/actions.ts";
import { type Shown, shownFields } from "../../domain/notification.ts";
import { bound, type Db } from "../orm.ts";
import { canceledByPublisher } from "./settle.ts";

/** A leased push delivery with what its sender needs: the notification and the sealed token. */
export interface DueDelivery extends Shown {
  notification_id: string;
  /** The notification's project (a replace key's tag is the project's). */
  project_id: string;
  device_id: string;
  /** The device's account: sends in flight are capped per account. */
  account_id: string;
  platform: string;
  attempts: number;
  /** It asks for acknowledgement and has none yet (a web push shows an Acknowledge button). */
  awaits_ack: boolean;
  /** Its buttons while nobody answered (null when none, or answered). */
  actions: StoredAction[] | null;
  created_at: Date;
  expires_at: Date | null;
  /** The device's quiet hours (domain/quiet-hours.ts), or nulls. */
  quiet_tz: string | null;
  quiet_start: number | null;
  quiet_end: number | null;
  /** The device's sealed push token (see PushTokenKeyRing), or null when it has none. */
  token_key_id: string | null;
  token_box: Buffer | null;
}

/** The shown fields, of the notification `n`. */
const shownColumns = shownFields.map((f) => `n.${f}`).join(", ");

/**
 * How many sends one account may have in flight in this worker, and how many it has: the claim
 * gives each account at most the rest, so one account's slow endpoints hold only its share.
 */
export interface ClaimShare {
  perAccount: number;
  busy: ReadonlyMap<string, number>;
}

/** Of delivery `d`: a push whose attempt is due and that no live lease holds (the claim's, and the probe's). */
export const pushDueOf = (d: string) => `${d}.state = 'pending' and ${d}.platform <> 'stream'
     and ${d}.next_attempt_at <= now() and (${d}.locked_until is null or ${d}.locked_until < now())`;

/**
 * The claim, one statement: $1 the accounts at their share (not even looked at: their due rows
 * would fill the window), $2 the window, $3 the most one claim gives an account, $4 the share,
 * $5 what each account has in flight, $6 the lease in seconds. Each claimed row's device and
 * notification are read by key (`lateral … offset 0`, which the planner cannot turn into a
 * join): as joins, on PostgreSQL 18 after a full benchmark's publishes (350,000 notifications,
 * statistics from before the fan-out) the plan expected 35,200 claimed rows for 200 and read
 * the whole notification index each claim, 140-200 ms (`auto_explain`); read by key, 1.6 ms on
 * average (BENCHMARKS.md, twentieth session; test/api/claim-plan.test.ts).
 */
export const claimStatement = `with due as (
  select d.notification_id, d.device_id, d.next_attempt_at, d.cancel_requested, dv.account_id
    from delivery d
   cross join lateral (select account_id from device where id = d.device_id offset 0) dv
   where ${pushDueOf("d")}
     and not ($1::jsonb @> to_jsonb(dv.account_id::text))
   order by d.next_attempt_at limit $2 for update of d skip locked
), withdrawn as (
  -- canceled while on the wire with a worker that died: not tried again
  update delivery d set state = 'canceled', last_error = '${canceledByPublisher}',
         locked_until = null, cancel_requested = false, updated_at = now()
    from due where due.cancel_requested
     and d.notification_id = due.notification_id and d.device_id = due.device_id
), fair as (
  select notification_id, device_id from (
    select due.*, row_number() over (partition by account_id order by next_attempt_at) as r
      from due where not due.cancel_requested) ranked
   where r <= least($3::int, $4::int - coalesce(($5::jsonb ->> account_id::text)::int, 0))
), claimed as (
  update delivery d set locked_until = now() + make_interval(secs => $6),
         attempts = d.attempts + 1, updated_at = now()
    from fair where d.notification_id = fair.notification_id and d.device_id = fair.device_id
  returning d.notification_id, d.device_id, d.platform, d.attempts
)
select c.*, n.*, dv.*
  from claimed c
 cross join lateral (
   select ${shownColumns}, n.project_id, n.created_at, n.expires_at,
          (n.require_ack and n.acknowledged_at is null) as awaits_ack,
          case when n.acknowledged_at is null then n.actions end as actions
     from notification n where n.id = c.notification_id offset 0) n
 cross join lateral (
   select dv.token_key_id, dv.token_box, dv.account_id, dv.quiet_tz, dv.quiet_start, dv.quiet_end
     from device dv where dv.id = c.device_id offset 0) dv`;

/**
 * Claims up to `limit` push deliveries that are due, leasing them for `leaseSeconds`: the
 * oldest first, and of each account no more than its share allows, and half its share at most.
 */
export async function claimDue(
  db: Db,
  limit: number,
  leaseSeconds: number,
  share: ClaimShare,
): Promise<DueDelivery[]> {
  const busy = JSON.stringify(Object.fromEntries(share.busy));
  // Half the share at most: the worker claims again while this claim's sends are being started.
  const perClaim = Math.max(1, Math.ceil(share.perAccount / 2));
  const full = [...share.busy].filter(([, n]) => n >= share.perAccount).map(([account]) => account);
  const rows = await bound<Record<string, unknown>>(db, claimStatement, [
    JSON.stringify(full),
    limit,
    perClaim,
    share.perAccount,
    busy,
    leaseSeconds,
  ]);
  return rows.map((r) => ({
    ...(r as unknown as DueDelivery),
    created_at: new Date(r.created_at as string),
    expires_at: r.expires_at ? new Date(r.expires_at as string) : null,
  }));
}
