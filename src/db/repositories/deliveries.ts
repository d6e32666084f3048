/**
 * Deliveries as devices and publishers see them: a device marks what it fetched or opened, a
 * publisher reads per-device states. Raw SQL by the ORM rule (the delivery table belongs to the
 * queue, db/notifications/, db/deliveries/); these are single indexed statements.
 */

import { jsonIds } from "../json-ids.ts";
import type { Orm } from "../orm.ts";

export interface DeviceDeliveryRow {
  device_id: string;
  device_name: string;
  platform: string;
  state: string;
  attempts: number;
  last_error: string;
  sent_at: Date | null;
  delivered_at: Date | null;
  opened_at: Date | null;
  updated_at: Date;
}

export class DeliveryRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  /**
   * The device fetched, acknowledged or opened it; states only move forward (delivered → opened).
   * (Streams mark `sent` in bulk: queue/mark-streamed.ts.)
   */
  async markByDevice(
    deviceId: string,
    notificationId: string,
    state: "delivered" | "opened",
  ): Promise<boolean> {
    const rank = { delivered: 2, opened: 3 }[state];
    const res = await this.#db.execute<{ affectedRows: number }>(
      `update delivery set state = ?, updated_at = now(),
              sent_at = coalesce(sent_at, now()),
              delivered_at = case when ? >= 2 then coalesce(delivered_at, now()) else delivered_at end,
              opened_at = case when ? >= 3 then coalesce(opened_at, now()) else opened_at end
        where device_id = ? and notification_id = ?
          and (case state when 'pending' then 0 when 'sent' then 1 when 'delivered' then 2
                          when 'opened' then 3 else 9 end) < ?`,
      [state, rank, rank, deviceId, notificationId, rank],
      "run",
    );
    return res.affectedRows === 1;
  }

  /**
   * Receipts of several notifications at once (their deliveries to this device become
   * `delivered` where they were not yet), in one statement: the ids this device has no delivery
   * of are returned (services/receipts.ts asks whether a fan-out under way will make them).
   */
  async markManyDelivered(deviceId: string, notificationIds: readonly string[]): Promise<string[]> {
    if (notificationIds.length === 0) return [];
    // The update runs whether or not its CTE is read; the select sees the rows as they were.
    const rows = await this.#db.execute<{ notification_id: string }[]>(
      `with marked as (
         update delivery set state = 'delivered', updated_at = now(),
                sent_at = coalesce(sent_at, now()), delivered_at = coalesce(delivered_at, now())
          where device_id = ? and notification_id in ${jsonIds} and state in ('pending', 'sent'))
       select notification_id from delivery
        where device_id = ? and notification_id in ${jsonIds}`,
      [deviceId, JSON.stringify(notificationIds), deviceId, JSON.stringify(notificationIds)],
    );
    const found = new Set(rows.map((r) => r.notification_id));
    return notificationIds.filter((id) => !found.has(id));
  }

  /** Of these notifications, those of the account's projects still waiting for their fan-out. */
  async awaitingFanOut(accountId: string, notificationIds: readonly string[]): Promise<string[]> {
    const rows = await this.#db.execute<{ id: string }[]>(
      `select n.id from notification n join project p on p.id = n.project_id
        where n.id in ${jsonIds} and p.account_id = ? and n.status = 'queued'`,
      [JSON.stringify(notificationIds), accountId],
    );
    return rows.map((r) => r.id);
  }

  /** Whether the notification was delivered to this device at all. */
  async isFor(deviceId: string, notificationId: string): Promise<boolean> {
    const rows = await this.#db.execute(
      "select 1 from delivery where device_id = ? and notification_id = ?",
      [deviceId, notificationId],
    );
    return rows.length === 1;
  }

  /** One notification's deliveries, one per device, by device name. */
  async forNotification(notificationId: string): Promise<DeviceDeliveryRow[]> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select d.device_id, v.name as device_name, d.platform, d.state, d.attempts, d.last_error,
              d.sent_at, d.delivered_at, d.opened_at, d.updated_at
         from delivery d join device v on v.id = d.device_id
        where d.notification_id = ? order by v.name, d.device_id`,
      [notificationId],
    );
    const date = (v: unknown) => (v ? new Date(v as string) : null);
    return rows.map((r) => ({
      ...(r as unknown as DeviceDeliveryRow),
      sent_at: date(r.sent_at),
      delivered_at: date(r.delivered_at),
      opened_at: date(r.opened_at),
      updated_at: new Date(r.updated_at as string),
    }));
  }

  /** Delivery counts per state for many notifications at once. */
  async summaries(ids: string[]): Promise<Map<string, Record<string, number>>> {
    const out = new Map<string, Record<string, number>>();
    if (ids.length === 0) return out;
    const rows = await this.#db.execute<{ notification_id: string; state: string; n: string }[]>(
      `select notification_id, state, count(*) as n from delivery
        where notification_id in ${jsonIds} group by notification_id, state`,
      [JSON.stringify(ids)],
    );
    for (const r of rows) {
      const m = out.get(r.notification_id) ?? {};
      m[r.state] = Number(r.n);
      out.set(r.notification_id, m);
    }
    return out;
  }
}
