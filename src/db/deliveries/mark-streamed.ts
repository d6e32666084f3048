/** The settle of streams: a batch of a device's pending deliveries handed to its stream. */

import { jsonIds } from "../json-ids.ts";
import type { Db } from "../orm.ts";

export async function markStreamed(
  db: Db,
  deviceId: string,
  notificationIds: readonly string[],
): Promise<void> {
  if (notificationIds.length === 0) return;
  await db.execute(
    `update delivery set state = 'sent', sent_at = coalesce(sent_at, now()), updated_at = now()
      where device_id = ? and state = 'pending' and notification_id in ${jsonIds}`,
    [deviceId, JSON.stringify(notificationIds)],
  );
}
