/**
 * What a stream device is to be sent: the stream side of the queue. Stream deliveries are not
 * claimed by the worker; the process holding the device's stream reads them here and marks
 * them `sent` as it writes them (mark-streamed.ts).
 */
import { uuidv7Floor } from "../../domain/month.ts";
import { jsonIds } from "../json-ids.ts";
import type { Db } from "../orm.ts";

const dayMs = 24 * 60 * 60 * 1000;

/** Most ids of a catch-up read at once. */
export const backlogPage = 1_000;

/**
 * The device's deliveries among `ids` still pending, or, for a catch-up, every one it has not
 * acknowledged yet but `since` (the newest one the client received: stream-place.ts). Not only
 * those newer than `since`: a notification fanned out late (its process died before the
 * fan-out) is older than the device's cursor, and one marked `sent` as a dying stream wrote it
 * may never have reached the client. Delivery to a stream is at least once, until acknowledged;
 * clients drop an id they have shown. With `replay`, also those newer than `since` already
 * confirmed: a device read by several clients (two `herald listen`s of one machine, each of its
 * topics) has each one's receipts confirm it for all, and a client coming back missed what
 * another confirmed meanwhile. In id (creation) order, a page of `backlogPage` after `after`
 * (keyset paging: the stream reads the next page once it has written this one).
 */
export async function streamBacklog(
  db: Db,
  deviceId: string,
  opts: { ids?: string[]; since?: string; after?: string; replay?: boolean },
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
  const none = "00000000-0000-0000-0000-000000000000";
  const since = opts.since ?? none;
  // What expired (its ttl passed) is not re-sent: the expiry sweep may not have marked it yet.
  const rows = await db.execute<{ notification_id: string }[]>(
    `select d.notification_id from delivery d join notification n on n.id = d.notification_id
      where d.device_id = ? and d.notification_id <> ?::uuid and d.notification_id > ?::uuid
        and (d.state in ('pending', 'sent')
          or (?::boolean and d.state in ('delivered', 'opened') and d.notification_id > ?::uuid))
        and (n.expires_at is null or n.expires_at > now())
      order by d.notification_id limit ${backlogPage}`,
    [deviceId, since, opts.after ?? none, Boolean(opts.replay && opts.since), since],
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

/**
 * The device's notifications acknowledged or answered in the last `withinMs` (`by`: the device
 * that did it), for streams whose process could not hear the news meanwhile. Only those of the
 * last 24 hours: acknowledgements come while repeats and answers run, which stop at 24 hours.
 */
export async function clearedSince(
  db: Db,
  deviceId: string,
  withinMs: number,
): Promise<{ id: string; by: string }[]> {
  return db.execute<{ id: string; by: string }[]>(
    `select d.notification_id as id, coalesce(n.acknowledged_by::text, '') as by
       from delivery d join notification n on n.id = d.notification_id
      where d.device_id = ? and d.notification_id >= ?::uuid
        and n.acknowledged_at > now() - make_interval(secs => ?)
      order by d.notification_id`,
    [deviceId, uuidv7Floor(Date.now() - dayMs), withinMs / 1000],
  );
}
