/**
 * A notification addressed to one device only (the owner's "send a test"), committed together
 * with its delivery, so it skips the fan-out and is never sent to the account's other devices.
 */
import type { Orm } from "../orm.ts";

export async function enqueueDirect(
  orm: Orm,
  notification: { id: string; projectId: string; topic: string; title: string; message: string },
  device: { id: string; platform: string },
): Promise<void> {
  await orm.em.fork().transactional(async (em) => {
    await em.execute(
      `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
       values (?, ?, ?, ?, ?, 'normal', 'delivering', now())`,
      [
        notification.id,
        notification.projectId,
        notification.topic,
        notification.title,
        notification.message,
      ],
    );
    await em.execute(
      "insert into delivery (notification_id, device_id, platform) values (?, ?, ?)",
      [notification.id, device.id, device.platform],
    );
  });
}
