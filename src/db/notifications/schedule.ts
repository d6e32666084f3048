/**
 * Scheduled notifications: releasing the due ones to the fan-out, and canceling what of a
 * notification has not been sent. Raw SQL: both are one set-based statement each, racing the
 * worker by row locks rather than by reads.
 */

import { canceledByPublisher } from "../deliveries/settle.ts";
import type { Db } from "../orm.ts";
import { clearsOf } from "./acknowledgements.ts";
import { feedNewsOf } from "./feed-news.ts";
import { clearedNewsOf } from "./inbox-news.ts";

/** Of notification `n`: scheduled, and its time has come (the release's, and the worker's probe). */
export const scheduledDueOf = (n: string) =>
  `${n}.status = 'scheduled' and ${n}.deliver_at <= now()`;

/**
 * Releases scheduled notifications whose time has come: they become `queued`, and the same
 * round's fan-out sends them to the devices signed in now. Returns how many were released.
 */
export async function releaseDue(db: Db, limit: number): Promise<number> {
  const rows = await db.execute<{ n: string | number }[]>(
    `with due as (
       select s.id from notification s where ${scheduledDueOf("s")}
        order by s.deliver_at limit ? for update skip locked
     ), released as (
       update notification n set status = 'queued' from due where n.id = due.id returning 1
     )
     select count(*) as n from released`,
    [limit],
  );
  return Number(rows[0]?.n ?? 0);
}

const noDevice = "00000000-0000-0000-0000-000000000000";

export type CancelOutcome =
  /** Nothing of it was sent and nothing will be. */
  | "canceled"
  /** Its deliveries not yet handed to a provider were canceled (this time or before). */
  | "deliveries_canceled"
  /** Released and not fanned out yet: its deliveries do not exist for a moment. */
  | "fanning_out"
  /**
   * An unanswered question, closed even though sent: it can no longer be answered, its repeats
   * and escalation stop, and the devices that show it are to clear it.
   */
  | "question_closed"
  /** Every delivery was already sent or settled (none is on the wire either). */
  | "too_late"
  | "not_found";

/**
 * A notification's copies are canceled unless it is still being fanned out in chunks (`queued`,
 * fan-out.ts): its later chunks would make copies the cancel never saw, so the caller is asked
 * to try again in a second. A question withdrawn meanwhile is `canceled` whole, and is fanned
 * out no further.
 */
const whileNotFanning = "(n.status <> 'queued' or exists (select 1 from closed))";

/**
 * Cancels a notification of the project. A scheduled one is canceled whole. Of a released one,
 * the push deliveries still pending and not claimed by a worker are canceled; a claimed one may
 * be on the wire: it is left to finish and reported as it ends, but it is never tried again
 * (`cancel_requested`: where it would wait for a retry, it is canceled); stream deliveries are
 * handed over the moment they exist and are not canceled. Locks the notification's row, so a
 * concurrent release or fan-out goes before or after, never across. A question (it has actions)
 * not answered yet is closed too, sent or not: its asker stopped waiting (docs/api.md,
 * "Questions").
 */
export async function cancel(db: Db, projectId: string, id: string): Promise<CancelOutcome> {
  const rows = await db.execute<
    { status: string; canceled: number; had: number; closed: number; flagged: number }[]
  >(
    `with n as materialized (
       select id, status from notification where project_id = ? and id = ? for update
     ), whole as (
       update notification set status = 'canceled' from n
        where notification.id = n.id and n.status = 'scheduled' returning 1
     ), closed as (
       update notification set status = 'canceled', next_repeat_at = null, escalate_at = null
         from n
        where notification.id = n.id and n.status not in ('scheduled', 'canceled', 'expired')
          and notification.actions is not null and notification.responded_at is null
          and notification.acknowledged_at is null
       returning notification.id, notification.project_id
     ), ${clearsOf("closed")}, ${feedNewsOf("closed")}, ${clearedNewsOf("closed", "''")}, dels as (
       update delivery d set state = 'canceled', last_error = '${canceledByPublisher}',
              updated_at = now()
         from n
        where d.notification_id = n.id and d.state = 'pending' and d.platform <> 'stream'
          and (d.locked_until is null or d.locked_until < now()) and ${whileNotFanning}
       returning 1
     ), flagged as (
       update delivery d set cancel_requested = true
         from n
        where d.notification_id = n.id and d.state = 'pending' and d.platform <> 'stream'
          and d.locked_until >= now() and ${whileNotFanning}
       returning 1
     )
     select n.status, (select count(*) from closed)::int as closed,
            (select count(*) from fed)::int as fed, (select count(*) from told)::int as told,
            (select count(*) from flagged)::int as flagged,
            (select count(*) from whole)::int + (select count(*) from dels)::int as canceled,
            (select count(*) from delivery d where d.notification_id = n.id
                and d.state = 'canceled')::int as had
       from n`,
    // No device acted: every push device that was sent it clears it.
    [projectId, id, noDevice],
  );
  const row = rows[0];
  if (!row) return "not_found";
  if (row.status === "scheduled" || row.status === "canceled") return "canceled";
  if (row.closed > 0) return "question_closed";
  if (row.canceled > 0 || row.had > 0 || row.flagged > 0) return "deliveries_canceled";
  return row.status === "queued" ? "fanning_out" : "too_late";
}
