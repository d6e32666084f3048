/**
 * A notification addressed to one device only (the owner's "send a test"), committed together
 * with its delivery, so it skips the fan-out and is never sent to the account's other devices.
 * Its news to the streams goes with the commit, never after it (inbox-news.ts says why).
 */
import type { NotificationRecord } from "../../domain/notification.ts";
import { insertNotification, notificationValues } from "../notifications/codec.ts";
import { deliveryChannel } from "../notifications/fan-out.ts";
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
    // A stream device's process hands it over when this commits, as a fan-out's news does.
    if (device.platform === "stream") {
      await em.execute("select pg_notify(?, ?)", [
        deliveryChannel,
        JSON.stringify([notification.id]),
      ]);
    }
  });
}
