/**
 * Acknowledge and escalate, in the queue: repeating what waits for acknowledgement, escalating
 * what waited too long, and recording the first acknowledgement. Each is one statement that
 * locks the notification rows it changes, so two workers (or a worker and an acknowledgement)
 * never act twice on one notification.
 */
import { shownFields } from "../../domain/notification.ts";
import type { Db } from "../orm.ts";
import { insertCopyOf } from "./codec.ts";
import { feedNewsOf } from "./feed-news.ts";
import { clearedNewsOf, repeatNewsOf } from "./inbox-news.ts";

/** Of notification `n`: its repeat is due, and nobody acknowledged it (the repeat's, and the probe's). */
export const repeatDueOf = (
  n: string,
) => `${n}.next_repeat_at <= now() and ${n}.acknowledged_at is null
          and ${n}.status not in ('scheduled', 'canceled', 'queued')`;

/** Of notification `n`: nobody acknowledged it in time, and it has not escalated (the same). */
export const escalationDueOf = (
  n: string,
) => `${n}.escalate_at <= now() and ${n}.acknowledged_at is null
          and ${n}.escalated_at is null and ${n}.status not in ('scheduled', 'canceled')`;

/**
 * Sends again the notifications whose repeat is due and that nobody acknowledged: their push
 * deliveries that reached the provider or the device become pending again (same collapse id, so
 * the phone shows it anew rather than twice). Repeats stop at the notification's ttl, or 24 hours.
 * The live streams are told in the statement (inbox-news.ts). Returns the ids repeated.
 */
export async function repeatDue(db: Db, limit: number, scale: number): Promise<string[]> {
  const rows = await db.execute<{ id: string }[]>(
    `with due as (
       select r.id from notification r where ${repeatDueOf("r")}
        order by r.next_repeat_at limit ? for update skip locked
     ), bumped as (
       update notification n set repeats = n.repeats + 1,
              next_repeat_at = case
                when coalesce(n.expires_at, n.created_at + interval '24 hours')
                     > now() + make_interval(secs => n.repeat_every_seconds * ?::float8)
                then now() + make_interval(secs => n.repeat_every_seconds * ?::float8) end
         from due where n.id = due.id
       returning n.id, n.project_id
     ), ${feedNewsOf("bumped")}, ${repeatNewsOf("bumped")}, again as (
       update delivery d set state = 'pending', next_attempt_at = now(), locked_until = null,
              updated_at = now()
         from bumped
        where d.notification_id = bumped.id and d.platform <> 'stream'
          and d.state in ('sent', 'delivered', 'opened')
     )
     select id, (select count(*) from fed) as fed, (select count(*) from told) as told
       from bumped`,
    [limit, scale, scale],
  );
  return rows.map((r) => r.id);
}

/* A time-ordered UUID (version 7) made in SQL: PostgreSQL 15 has no uuidv7(). */
const uuidv7Sql = `(lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
  || '7' || substr(md5(random()::text), 1, 3) || to_hex(8 + floor(random() * 4)::int)
  || substr(md5(random()::text), 1, 15))::uuid`;

/**
 * The metadata of notification `n` with `escalated_from` set to its id, last: built with `json`
 * functions, which keep the keys in their order (`jsonb` would sort them; docs/decisions.md).
 */
const withEscalatedFrom = (n: string) => `(
  select json_object_agg(k, v order by o) from (
    select m.key as k, m.value as v, m.o
      from json_each(coalesce(${n}.metadata, '{}'::json)) with ordinality as m(key, value, o)
     where m.key <> 'escalated_from'
    union all select 'escalated_from', to_json(${n}.id), 9223372036854775807) kv)`;

/** The escalated copy of `e`: what it shows, but `high` and "Escalated: …", to the escalation's topic and project. */
const escalatedCopy = insertCopyOf("e", shownFields, {
  id: "e.escalation_id",
  project_id: "coalesce(e.escalate_project_id, e.project_id)",
  topic: "coalesce(e.escalate_topic, e.topic)",
  title: "left('Escalated: ' || e.title, 120)",
  priority: "'high'",
  metadata: withEscalatedFrom("e"),
  status: "'queued'",
  created_at: "now()",
});

/**
 * Escalates what nobody acknowledged in time: a new notification, `high`, titled
 * "Escalated: …", to the escalation topic and project, queued for the fan-out; the original
 * records when and which. Returns how many escalated.
 */
export async function escalateDue(db: Db, limit: number): Promise<number> {
  const rows = await db.execute<{ n: string | number }[]>(
    `with due as (
       select e.id, ${uuidv7Sql} as escalation_id from notification e where ${escalationDueOf("e")}
        order by e.escalate_at limit ? for update skip locked
     ), escalated as (
       update notification n set escalated_at = now(), escalate_at = null,
              escalation_id = due.escalation_id
         from due where n.id = due.id
       returning n.*
     ), published as (
       ${escalatedCopy}
         from escalated e
       returning 1
     )
     select count(*) as n from published`,
    [limit],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * The first acknowledgement of a notification that asked for one, or that has actions (then it
 * is dismissed without an answer): recorded with the device, repeats and escalation stopped.
 * False when it asked for none or was acknowledged (or answered) before.
 */
export async function acknowledge(db: Db, id: string, deviceId: string): Promise<boolean> {
  const rows = await db.execute(
    `with acked as (
       update notification set acknowledged_at = now(), acknowledged_by = ?,
              next_repeat_at = null, escalate_at = null
        where id = ? and (require_ack or actions is not null) and acknowledged_at is null
          and status <> 'canceled'
       returning id, project_id, acknowledged_by
     ), ${clearsOf("acked")}, ${feedNewsOf("acked")}, ${clearedNewsOf("acked", "t.acknowledged_by")}
     select (select count(*) from fed) as fed, (select count(*) from told) as told from acked`,
    [deviceId, id, deviceId],
  );
  return rows.length === 1;
}

/**
 * A CTE that queues a clear for each other push device (Web Push, APNs, FCM) that was sent the notification in
 * `cte` (one row with `id`); its one parameter is the device that acted.
 */
export const clearsOf = (cte: string) => `clears as (
       insert into clear_push (notification_id, device_id)
       select d.notification_id, d.device_id from delivery d join ${cte} on ${cte}.id = d.notification_id
        where d.platform <> 'stream' and d.device_id <> ? and d.state in ('sent', 'delivered', 'opened')
       on conflict do nothing
     )`;

export interface DueClear {
  notification_id: string;
  device_id: string;
  platform: string;
  token_key_id: string | null;
  token_box: Buffer | null;
}

/** Takes (and removes) clears to send, with each device's sealed token. */
export async function claimClears(db: Db, limit: number): Promise<DueClear[]> {
  return db.execute<DueClear[]>(
    `with due as (
       select notification_id, device_id from clear_push order by created_at
        limit ? for update skip locked
     ), taken as (
       delete from clear_push c using due
        where c.notification_id = due.notification_id and c.device_id = due.device_id
       returning c.notification_id, c.device_id
     )
     select t.notification_id, t.device_id, dv.platform, dv.token_key_id, dv.token_box
       from taken t join device dv on dv.id = t.device_id
      where dv.signed_out_at is null and dv.enabled`,
    [limit],
  );
}
