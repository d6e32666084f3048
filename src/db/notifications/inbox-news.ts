/**
 * News for live streams (InboxService.Subscribe): a notification to clear (acknowledged, answered,
 * or a question withdrawn) or sent again (a repeat). The statement that records it NOTIFYs every
 * process's stream hub, so the news goes out when, and only when, it commits. Before, the hub
 * sent it after the commit, on its own connection: a process killed in between, or one whose
 * LISTEN connection was away (a NOTIFY then went nowhere), left the other devices' streams
 * showing a notification somebody had acknowledged; and a NOTIFY that failed after the commit
 * answered the call 503 although its acknowledgement was recorded, and the retry, finding it
 * recorded, told nobody.
 *
 * These statements already NOTIFY the consoles' feeds (feed-news.ts), so the second NOTIFY adds
 * no lock of its own.
 */

/** The channel for repeats and clears; the hub parses each payload as an `InboxNews`. */
export const inboxChannel = "herald_inbox";

/**
 * Ids per repeat NOTIFY: a UUID and its JSON quoting cost 40 bytes, and a payload is limited to
 * 8000 bytes.
 */
const repeatChunk = 150;

/**
 * News for streams: notifications sent again, or one to clear (acknowledged or answered by the
 * device `by`, or a question withdrawn by its asker: `by` empty).
 */
export type InboxNews =
  | { kind: "repeat"; ids: string[] }
  | { kind: "cleared"; id: string; by: string };

/**
 * A CTE `told` that tells the streams to clear each row of `cte` (its `id`), acted on by `by`
 * (an SQL expression over the row `t`). Like every CTE without data changes, it runs only when
 * the statement reads it: `(select count(*) from told)`.
 */
export const clearedNewsOf = (cte: string, by: string) => `told as materialized (
       select pg_notify('${inboxChannel}',
                        json_build_object('kind', 'cleared', 'id', t.id, 'by', ${by})::text)
         from ${cte} t
     )`;

/** A CTE `told` that tells the streams the rows of `cte` (their `id`) were sent again; read it as above. */
export const repeatNewsOf = (cte: string) => `told as materialized (
       select pg_notify('${inboxChannel}',
                        json_build_object('kind', 'repeat', 'ids', json_agg(r.id))::text)
         from (select id, (row_number() over () - 1) / ${repeatChunk} as part from ${cte}) r
        group by r.part
     )`;
