/**
 * The delivery queue in SQL: fan-out of queued notifications, claiming due pushes with
 * FOR UPDATE SKIP LOCKED and a lease, recording outcomes, and the device inbox. A claim's lease
 * (30 s) is what lets another worker pick up what a dead one left.
 */
import type { Orm } from "../db/orm.ts";

/** The channel every process LISTENs on for notifications that reached stream devices. */
export const deliveryChannel = "herald_delivery";
/** 150 ids × 40 bytes of JSON stays well under PostgreSQL's 8000-byte NOTIFY payload limit. */
export const announceChunk = 150;

/** How long a claimed delivery is reserved; a dead worker's claims are free again after it. */
export const defaultLeaseSeconds = 30;

export interface DueDelivery {
  notification_id: string;
  device_id: string;
  platform: string;
  attempts: number;
  topic: string;
  title: string;
  message: string;
  priority: string;
  click_url: string | null;
  created_at: Date;
  expires_at: Date | null;
  /** The device's sealed push token (see TokenKeyRing), or null when it has none. */
  token_key_id: string | null;
  token_box: Buffer | null;
}

export type Outcome =
  | { state: "sent" }
  | { state: "failed" | "expired"; error: string }
  | { state: "pending"; error: string; nextAttemptAt: Date };

type DeliveryKey = { notification_id: string; device_id: string };

const jsonIds = "(select (json_array_elements_text(?::json))::uuid)";

export class DeliveryStore {
  readonly #orm: Orm;
  readonly #leaseSeconds: number;

  constructor(orm: Orm, leaseSeconds = defaultLeaseSeconds) {
    this.#orm = orm;
    this.#leaseSeconds = leaseSeconds;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  /**
   * Fans out up to `limit` queued notifications in one statement: one delivery per enabled,
   * signed-in device of the owning account whose topic filter admits the topic. Returns the ids
   * fanned out and how many push (non-stream) deliveries were created.
   *
   * The ids that reached stream devices are announced (NOTIFY, in chunks that fit its payload
   * limit) by the same statement, so every process's live streams learn of them when, and only
   * when, the fan-out commits, without another round trip and commit.
   *
   * The claimed notifications are resolved by key behind materialised CTEs before the join to
   * devices: with statistics lagging a burst of publishes, the planner otherwise scanned every
   * notification of the project once per device (measured: 52,628 × 1,000 rows, 31 s).
   */
  async fanOut(limit: number): Promise<{ ids: string[]; pushes: number }> {
    const rows = await this.#db.execute<{ id: string; pushes: string | number }[]>(
      `with claimed as materialized (
         select n.id, n.topic, n.project_id from notification n
          where n.status = 'queued' order by n.id limit ? for update skip locked
       ), targets as materialized (
         select c.id, c.topic, p.account_id, p.name as project
           from claimed c join project p on p.id = c.project_id
       ), ins as (
         insert into delivery (notification_id, device_id, platform, next_attempt_at)
         select t.id, d.id, d.platform, now()
           from targets t
           join device d on d.account_id = t.account_id
          where d.signed_out_at is null and d.enabled
            and (d.platform = 'stream' or d.token_box is not null)
            and (cardinality(d.topics) = 0
                 or t.topic = any(d.topics)
                 or t.project || '/' || t.topic = any(d.topics)
                 or t.project || '/*' = any(d.topics))
         on conflict do nothing
         returning notification_id, platform
       ), upd as (
         update notification n set status = case
             when exists (select 1 from ins where ins.notification_id = n.id) then 'delivering'
             else 'no_devices' end
           from claimed c where n.id = c.id
         returning n.id
       ), announced as materialized (
         select pg_notify(?, json_agg(s.notification_id order by s.notification_id)::text)
           from (select notification_id, (row_number() over (order by notification_id) - 1) / ? as chunk
                   from (select distinct notification_id from ins where platform = 'stream') x) s
          group by s.chunk
       )
       select upd.id, (select count(*) from ins where ins.platform <> 'stream') as pushes,
              (select count(*) from announced) as announcements
         from upd`,
      [limit, deliveryChannel, announceChunk],
    );
    return { ids: rows.map((r) => r.id), pushes: Number(rows[0]?.pushes ?? 0) };
  }

  /** A notification addressed to one device only, committed with its delivery. */
  async addressedTo(
    notification: { id: string; projectId: string; title: string; message: string },
    device: { id: string; platform: string },
  ): Promise<void> {
    await this.#orm.em.fork().transactional(async (em) => {
      await em.execute(
        `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
         values (?, ?, 'herald-test', ?, ?, 'normal', 'delivering', now())`,
        [notification.id, notification.projectId, notification.title, notification.message],
      );
      await em.execute(
        "insert into delivery (notification_id, device_id, platform) values (?, ?, ?)",
        [notification.id, device.id, device.platform],
      );
    });
  }

  /** Claims up to `limit` push deliveries that are due, leasing them. */
  async claimDue(limit: number): Promise<DueDelivery[]> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `with due as (
         select notification_id, device_id from delivery
          where state = 'pending' and platform <> 'stream' and next_attempt_at <= now()
            and (locked_until is null or locked_until < now())
          order by next_attempt_at limit ? for update skip locked
       ), claimed as (
         update delivery d set locked_until = now() + make_interval(secs => ?),
                attempts = d.attempts + 1, updated_at = now()
           from due where d.notification_id = due.notification_id and d.device_id = due.device_id
         returning d.notification_id, d.device_id, d.platform, d.attempts
       )
       select c.*, n.topic, n.title, n.message, n.priority, n.click_url, n.created_at, n.expires_at,
              dv.token_key_id, dv.token_box
         from claimed c join notification n on n.id = c.notification_id
         join device dv on dv.id = c.device_id`,
      [limit, this.#leaseSeconds],
    );
    return rows.map((r) => ({
      ...(r as unknown as DueDelivery),
      created_at: new Date(r.created_at as string),
      expires_at: r.expires_at ? new Date(r.expires_at as string) : null,
    }));
  }

  /** Records the outcomes of many sends in one statement (a worker's sends finish together). */
  async settleMany(items: readonly { delivery: DeliveryKey; outcome: Outcome }[]): Promise<void> {
    if (items.length === 0) return;
    const rows = items.map(({ delivery: d, outcome: o }) => ({
      n: d.notification_id,
      d: d.device_id,
      s: o.state,
      e: o.state === "sent" ? "" : o.error,
      t: o.state === "pending" ? o.nextAttemptAt.toISOString() : null,
    }));
    await this.#db.execute(
      `update delivery d set state = o.s, last_error = o.e, locked_until = null, updated_at = now(),
              next_attempt_at = coalesce(o.t, d.next_attempt_at),
              sent_at = case when o.s = 'sent' then now() else d.sent_at end
         from json_to_recordset(?::json) as o(n uuid, d uuid, s text, e text, t timestamptz)
        where d.notification_id = o.n and d.device_id = o.d and d.state = 'pending'`,
      [JSON.stringify(rows)],
    );
  }

  async disableDevice(deviceId: string, reason: string): Promise<void> {
    await this.#db.execute("update device set enabled = false, disabled_reason = ? where id = ?", [
      reason,
      deviceId,
    ]);
  }

  /** Stream deliveries whose notification's ttl passed become `expired`. */
  async expireStreamDeliveries(): Promise<number> {
    const res = await this.#db.execute<{ affectedRows: number }>(
      `update delivery d set state = 'expired', last_error = 'ttl passed before the device connected',
              updated_at = now()
         from notification n
        where n.id = d.notification_id and d.state = 'pending' and d.platform = 'stream'
          and coalesce(n.expires_at, n.created_at + interval '24 hours') <= now()`,
      [],
      "run",
    );
    return res.affectedRows;
  }

  /**
   * The device fetched, acknowledged or opened it; states only move forward (delivered → opened).
   * (Streams mark `sent` in bulk with markStreamed.)
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

  /** Marks a batch of a stream device's pending deliveries `sent` (handed to its stream). */
  async markStreamed(deviceId: string, notificationIds: readonly string[]): Promise<void> {
    if (notificationIds.length === 0) return;
    await this.#db.execute(
      `update delivery set state = 'sent', sent_at = coalesce(sent_at, now()), updated_at = now()
        where device_id = ? and state = 'pending' and notification_id in ${jsonIds}`,
      [deviceId, JSON.stringify(notificationIds)],
    );
  }

  /** Whether the notification was delivered to this device at all. */
  async isFor(deviceId: string, notificationId: string): Promise<boolean> {
    const rows = await this.#db.execute(
      "select 1 from delivery where device_id = ? and notification_id = ?",
      [deviceId, notificationId],
    );
    return rows.length === 1;
  }

  /**
   * What a stream device should be sent: its deliveries among `ids`, or, for a catch-up, every
   * one newer than `since` that it has not acknowledged yet. In id (creation) order.
   */
  async streamBacklog(
    deviceId: string,
    opts: { ids?: string[]; since?: string },
  ): Promise<string[]> {
    if (opts.ids) {
      const rows = await this.#db.execute<{ notification_id: string }[]>(
        `select notification_id from delivery
          where device_id = ? and state = 'pending' and notification_id in ${jsonIds}
          order by notification_id`,
        [deviceId, JSON.stringify(opts.ids)],
      );
      return rows.map((r) => r.notification_id);
    }
    const rows = await this.#db.execute<{ notification_id: string }[]>(
      `select notification_id from delivery
        where device_id = ? and state in ('pending', 'sent') and notification_id > ?::uuid
        order by notification_id limit 1000`,
      [deviceId, opts.since ?? "00000000-0000-0000-0000-000000000000"],
    );
    return rows.map((r) => r.notification_id);
  }

  /** A stream device's deliveries still pending after `minAgeMs`, oldest first. */
  async pendingStream(deviceId: string, minAgeMs: number): Promise<string[]> {
    const rows = await this.#db.execute<{ notification_id: string }[]>(
      `select notification_id from delivery
        where device_id = ? and state = 'pending' and platform = 'stream'
          and created_at <= now() - make_interval(secs => ?)
        order by notification_id limit 500`,
      [deviceId, minAgeMs / 1000],
    );
    return rows.map((r) => r.notification_id);
  }

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
