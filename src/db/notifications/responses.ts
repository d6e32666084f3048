/**
 * Answers to notifications with actions: one statement records the first answer (and with it
 * the acknowledgement: repeats and escalation stop), and queues the clears of the other Web Push
 * devices. The row lock makes concurrent answers take turns: the second finds one recorded.
 */
import type { Db } from "../orm.ts";
import { clearsOf } from "./acknowledgements.ts";
import { feedNewsOf } from "./feed-news.ts";
import { clearedNewsOf } from "./inbox-news.ts";

/** When the answer was recorded, or null when another answer (or a dismissal) came first. */
export async function respond(
  db: Db,
  id: string,
  deviceId: string,
  answer: { actionId: string; text: string },
): Promise<Date | null> {
  const rows = await db.execute<{ responded_at: string | Date }[]>(
    `with answered as (
       update notification set responded_at = now(), responded_by = ?, response_action = ?,
              response_text = nullif(?, ''), acknowledged_at = now(), acknowledged_by = ?,
              next_repeat_at = null, escalate_at = null
        where id = ? and actions is not null and responded_at is null and acknowledged_at is null
          and status <> 'canceled'
       returning id, project_id, responded_at, responded_by
     ), ${clearsOf("answered")}, ${feedNewsOf("answered")},
     ${clearedNewsOf("answered", "t.responded_by")}
     select responded_at, (select count(*) from fed) as fed, (select count(*) from told) as told
       from answered`,
    [deviceId, answer.actionId, answer.text, deviceId, id, deviceId],
  );
  const at = rows[0]?.responded_at;
  return at === undefined ? null : new Date(at);
}
