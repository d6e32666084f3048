/**
 * News for consoles' live feeds (NotifyService.WatchNotifications): the statements that change
 * what a feed shows (the fan-out, an acknowledgement, an answer, a withdrawn question, a repeat)
 * name the projects they changed on a channel every process LISTENs on, delivered when, and only
 * when, they commit. The stream hub wakes the feeds of those projects alone.
 */

/** The channel that tells consoles' live feeds which projects' notifications changed. */
export const feedChannel = "herald_feed";

/** Project ids (36 bytes and a comma each) that fit NOTIFY's 8000-byte payload; past it, `*`. */
const mostProjects = 150;

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
