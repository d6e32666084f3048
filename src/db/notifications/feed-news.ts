/**
 * News for consoles' live feeds (NotifyService.WatchNotifications): the statements that change
 * what a feed shows (the fan-out, an acknowledgement, an answer, a withdrawn question, a repeat)
 * name the projects they changed on a channel every process LISTENs on, delivered when, and only
 * when, they commit. The stream hub wakes the feeds of those projects alone.
 *
 * The group commit's batches are the exception: a NOTIFY in a transaction takes a database-wide
 * lock held through its commit, which queued every batch's commit behind the other slot's. So a
 * batch says which projects it fanned out, and the process tells them after the commit, many
 * batches' worth in one NOTIFY of its own (delivery/streams/feeds.ts).
 */

/** The channel that tells consoles' live feeds which projects' notifications changed. */
export const feedChannel = "herald_feed";

/** Project ids (36 bytes and a comma each) that fit NOTIFY's 8000-byte payload; past it, `*`. */
const mostProjects = 150;

/** The payload of news of these projects, as `feedNewsOf` makes it. */
export const feedPayloadOf = (projectIds: ReadonlySet<string>) =>
  projectIds.size > mostProjects ? "*" : [...projectIds].join(",");

/**
 * A CTE `fed` that announces the distinct `project_id`s of the rows of `cte`. PostgreSQL runs a
 * CTE without data changes only when the statement reads it, so the statement must: e.g.
 * `(select count(*) from fed)` in its select list.
 */
export const feedNewsOf = (cte: string) => `fed as materialized (
       select pg_notify('${feedChannel}',
                        case when count(distinct f.project_id) > ${mostProjects} then '*'
                             else string_agg(distinct f.project_id::text, ',') end)
         from ${cte} f having count(*) > 0
     )`;
