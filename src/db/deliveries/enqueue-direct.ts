/**
 * A notification addressed to one device only (the owner's "send a test"), committed together
 * with its delivery, so it skips the fan-out and is never sent to the account's other devices.
 */
import type { NotificationRecord } from "../../domain/notification.ts";
import { insertNotification, notificationValues } from "../notifications/codec.ts";
import type { Orm } from "../orm.ts";

export async function enqueueDirect(
  orm: Orm,
  notification: NotificationRecord,
  device: { id: string; platform: string },
): Promise<void> {
  await orm.em.fork().transactional(async (em) => {
    // Already `delivering`: its one delivery is written here, the fan-out has nothing to do.
    await em.execute(
      insertNotification,
      notificationValues({ ...notification, status: "delivering" }),
    );
    await em.execute(
      "insert into delivery (notification_id, device_id, platform) values (?, ?, ?)",
      [notification.id, device.id, device.platform],
    );
  });
}
