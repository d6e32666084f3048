/** The push message of a claimed delivery, as its sender gets it. */
import type { DueDelivery } from "../db/index.ts";
import { replaceTagOf, shownOf } from "../domain/notification.ts";
import { quietHoursOf, silenced } from "../domain/quiet-hours.ts";
import type { PushMessage } from "./senders/sender.ts";

/** What the device is shown (or told), for a send now; the provider drops it after `until`. */
export function pushMessageOf(d: DueDelivery, until: Date): PushMessage {
  return {
    ...shownOf(d),
    notificationId: d.notification_id,
    collapseId: d.replace_key ? replaceTagOf(d.project_id, d.replace_key) : undefined,
    quiet: silenced(d.priority, quietHoursOf(d), new Date()),
    awaitsAck: d.awaits_ack,
    actions: typeof d.actions === "string" ? JSON.parse(d.actions) : (d.actions ?? undefined),
    expiresAt: until,
    hasTtl: d.expires_at !== null,
  };
}
