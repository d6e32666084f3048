/**
 * What a stream device is to be sent: the stream side of the queue. Stream deliveries are not
 * claimed by the worker; the process holding the device's stream reads them here and marks
 * them `sent` as it writes them (mark-streamed.ts).
 */
import { jsonIds } from "../json-ids.ts";
import type { Db } from "../orm.ts";

/**
 * The device's deliveries among `ids` still pending, or, for a catch-up, every one newer than
 * `since` that it has not acknowledged yet. In id (creation) order.
 */
export async function streamBacklog(
  db: Db,
  deviceId: string,
  opts: { ids?: string[]; since?: string },
): Promise<string[]> {
  if (opts.ids) {
    const rows = await db.execute<{ notification_id: string }[]>(
      `select notification_id from delivery
        where device_id = ? and state = 'pending' and notification_id in ${jsonIds}
        order by notification_id`,
      [deviceId, JSON.stringify(opts.ids)],
    );
    return rows.map((r) => r.notification_id);
  }
  // What expired (its ttl passed) is not re-sent: the expiry sweep may not have marked it yet.
  const rows = await db.execute<{ notification_id: string }[]>(
    `select d.notification_id from delivery d join notification n on n.id = d.notification_id
      where d.device_id = ? and d.state in ('pending', 'sent') and d.notification_id > ?::uuid
        and (n.expires_at is null or n.expires_at > now())
      order by d.notification_id limit 1000`,
    [deviceId, opts.since ?? "00000000-0000-0000-0000-000000000000"],
  );
  return rows.map((r) => r.notification_id);
}

/** The device's stream deliveries still pending after `minAgeMs`, oldest first (a safety net). */
export async function pendingStream(db: Db, deviceId: string, minAgeMs: number): Promise<string[]> {
  const rows = await db.execute<{ notification_id: string }[]>(
    `select d.notification_id from delivery d join notification n on n.id = d.notification_id
      where d.device_id = ? and d.state = 'pending' and d.platform = 'stream'
        and d.created_at <= now() - make_interval(secs => ?)
        and (n.expires_at is null or n.expires_at > now())
      order by d.notification_id limit 500`,
    [deviceId, minAgeMs / 1000],
  );
  return rows.map((r) => r.notification_id);
}

/** Of these notifications, those the device has a delivery of (repeats and clears). */
export async function deliveredTo(
  db: Db,
  deviceId: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.execute<{ notification_id: string }[]>(
    `select notification_id from delivery where device_id = ? and notification_id in ${jsonIds}
      order by notification_id`,
    [deviceId, JSON.stringify(ids)],
  );
  return rows.map((r) => r.notification_id);
}
