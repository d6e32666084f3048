/**
 * Fan-out: queued notifications become one delivery per target device. One statement, the
 * delivery path's first: raw SQL because it is set-based (hundreds of notifications × devices
 * in one round trip), which no entity API expresses.
 */
import type { Db } from "../orm.ts";
import { feedNewsOf } from "./feed-news.ts";

/** The channel every process LISTENs on for notifications that reached stream devices. */
export const deliveryChannel = "herald_delivery";
/** 150 ids × 40 bytes of JSON stays well under PostgreSQL's 8000-byte NOTIFY payload limit. */
export const announceChunk = 150;

/**
 * The fan-out's rule, its one home: whether device `d` is a target of a notification with topic
 * `topic` of project `project` (SQL expressions). Every enabled, signed-in device of the account
 * with a push channel (or a `stream` device) whose filter admits the topic, by name, by
 * `project/topic` or by `project/*`. Used by the worker's fan-out below and by the group commit's
 * (group-commit.ts).
 */
export const reaches = (d: string, topic: string, project: string) =>
  `${d}.signed_out_at is null and ${d}.enabled
          and (${d}.platform = 'stream' or ${d}.token_box is not null)
          and (cardinality(${d}.topics) = 0
               or ${topic} = any(${d}.topics)
               or ${project} || '/' || ${topic} = any(${d}.topics)
               or ${project} || '/*' = any(${d}.topics))`;

/**
 * A CTE `announced` that NOTIFYs `herald_delivery` with the distinct notification ids of the
 * rows of `cte` (`notification_id`, `platform`) that reached stream devices, in chunks that fit
 * NOTIFY's payload. Like feedNewsOf, it runs only if the statement reads it.
 */
export const announcementOf = (cte: string) => `announced as materialized (
       select pg_notify('${deliveryChannel}', json_agg(s.notification_id order by s.notification_id)::text)
         from (select notification_id, (row_number() over (order by notification_id) - 1) / ${announceChunk} as chunk
                 from (select distinct notification_id from ${cte} where platform = 'stream') x) s
        group by s.chunk
     )`;

/**
 * Fans out up to `limit` queued notifications: one delivery per enabled, signed-in device of
 * the owning account whose topic filter admits the topic. Returns the ids fanned out and how
 * many push (non-stream) deliveries were created.
 *
 * The ids that reached stream devices are announced (NOTIFY, in chunks that fit its payload
 * limit) by the same statement, and so are the projects fanned out (consoles' live feeds; `*`
 * past 150 projects), so every process's live streams and feeds learn of them when, and only
 * when, the fan-out commits, without another round trip and commit.
 *
 * The claimed notifications are resolved by key behind materialised CTEs before the join to
 * devices: with statistics lagging a burst of publishes, the planner otherwise scanned every
 * notification of the project once per device (measured: 52,628 × 1,000 rows, 31 s).
 */
export async function fanOut(db: Db, limit: number): Promise<{ ids: string[]; pushes: number }> {
  const rows = await db.execute<{ id: string; pushes: string | number }[]>(
    `with claimed as materialized (
       select n.id, n.topic, n.project_id from notification n
        where n.status = 'queued' order by n.id limit ? for update skip locked
     ), targets as materialized (
       select c.id, c.topic, p.account_id, p.name as project
         from claimed c join project p on p.id = c.project_id
     ), ins as (
       insert into delivery (notification_id, device_id, platform, next_attempt_at)
       select t.id, d.id, d.platform, now()
         from targets t
         join device d on d.account_id = t.account_id
        where ${reaches("d", "t.topic", "t.project")}
       on conflict do nothing
       returning notification_id, platform
     ), upd as (
       update notification n set status = case
           when exists (select 1 from ins where ins.notification_id = n.id) then 'delivering'
           else 'no_devices' end
         from claimed c where n.id = c.id
       returning n.id
     ), ${announcementOf("ins")}, ${feedNewsOf("claimed")}
     select upd.id, (select count(*) from ins where ins.platform <> 'stream') as pushes,
            (select count(*) from announced) as announcements,
            (select count(*) from fed) as fed
       from upd`,
    [limit],
  );
  return { ids: rows.map((r) => r.id), pushes: Number(rows[0]?.pushes ?? 0) };
}
