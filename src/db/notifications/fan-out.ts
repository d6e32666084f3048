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

/** Of notification `n`: waiting for the workers' fan-out (the fan-out's, and the worker's probe). */
export const queuedOf = (n: string) => `${n}.status = 'queued'`;

/** Above every uuid: "no cursor yet", "no notification cut short". */
const lastUuid = "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid";

/**
 * Fans out up to `limit` queued notifications, `chunk` deliveries at most: one delivery per
 * enabled, signed-in device of the owning account whose topic filter admits the topic. Returns
 * the ids fanned out (to the end), how many push (non-stream) deliveries were created, and
 * whether the chunk cut a notification's fan-out short (`more`: call again at once).
 *
 * A notification with more targets than the chunk is fanned out over several statements, each
 * committed, newest device first: the first pushes are claimed and on the wire while the rest
 * is written (a fan-out to 10,000 devices no longer waits for one 10,000-row insert). It stays
 * `queued` until its last chunk; each chunk resumes below the lowest device id already given a
 * delivery of it (only this function writes deliveries of a queued notification; a device
 * signed in meanwhile is newer, and not a target, as before), so a worker that dies between
 * chunks leaves nothing another cannot finish, and nothing twice.
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
export async function fanOut(
  db: Db,
  limit: number,
  chunk: number,
): Promise<{ ids: string[]; pushes: number; more: boolean }> {
  const rows = await db.execute<
    { ids: string[] | null; pushes: string | number; cut: string | null }[]
  >(
    `with claimed as materialized (
       select n.id, n.topic, n.project_id from notification n
        where ${queuedOf("n")} order by n.id limit ? for update skip locked
     ), targets as materialized (
       select c.id, c.topic, p.account_id, p.name as project,
              (select x.device_id from delivery x where x.notification_id = c.id
                order by x.device_id limit 1) as cursor
         from claimed c join project p on p.id = c.project_id
     ), reached as materialized (
       -- each notification's next targets, newest device first, read off device_account
       -- (account_id, id desc) from the cursor on: a chunk costs what it writes, not the
       -- account's every device
       select t.id, r.device_id, r.platform,
              row_number() over (order by t.id, r.device_id desc) as n
         from targets t cross join lateral (
           select d.id as device_id, d.platform from device d
            where d.account_id = t.account_id
              and d.id < coalesce(t.cursor, ${lastUuid})
              and ${reaches("d", "t.topic", "t.project")}
            order by d.id desc limit ?::int + 1) r
        order by n limit ?::int + 1
     ), cut as materialized (
       -- the first notification whose targets the chunk did not reach to the end
       select id from reached where n = ?::int + 1
     ), ins as (
       insert into delivery (notification_id, device_id, platform, next_attempt_at)
       select id, device_id, platform, now() from reached where n <= ?::int
       on conflict do nothing
       returning notification_id, platform
     ), upd as (
       update notification n set status = case
           when t.cursor is not null or exists (select 1 from ins where ins.notification_id = n.id)
           then 'delivering' else 'no_devices' end
         from targets t where n.id = t.id and t.id < coalesce((select id from cut), ${lastUuid})
       returning n.id, n.project_id
     ), ${announcementOf("ins")}, ${feedNewsOf("upd")}
     select (select json_agg(id) from upd) as ids,
            (select count(*) from ins where ins.platform <> 'stream') as pushes,
            (select id from cut) as cut,
            (select count(*) from announced) as announcements,
            (select count(*) from fed) as fed`,
    [limit, chunk, chunk, chunk, chunk],
  );
  const row = rows[0];
  return { ids: row?.ids ?? [], pushes: Number(row?.pushes ?? 0), more: Boolean(row?.cut) };
}
