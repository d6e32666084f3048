/**
 * Retention: notifications (with their deliveries) are deleted once older than the retention
 * period, and so are webhook events (with their deliveries) and attempts; idempotency records
 * once expired (24 hours); device logins, pairing codes and setup links an hour after expiring.
 * Deletes go in batches of a few thousand rows, each its own short statement, so a purge never
 * holds locks for long; several processes may purge at once (rows are taken with SKIP LOCKED).
 * A batch past the serving process's statement deadline (orm.ts: notifications whose deliveries
 * number in the millions, cascading with them) is tried again at half the size, so the purge
 * still gets through; before the deadline it could not stop, after it, it would never pass.
 */
import { uuidv7Floor } from "../../domain/month.ts";
import { isStatementCancelled } from "../errors.ts";
import type { Orm } from "../orm.ts";

const batch = 5000;

export interface Purged {
  notifications: number;
  idempotencyRecords: number;
  deviceLogins: number;
  webhookEvents: number;
  webhookAttempts: number;
}

export class RetentionRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  async purge(retentionDays: number, now = new Date()): Promise<Purged> {
    const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
    const hourAgo = new Date(now.getTime() - 3_600_000);
    const notifications = await this.#inBatches((size) => this.#purgeNotifications(cutoff, size));
    const idempotencyRecords = await this.#inBatches((size) =>
      this.#count(
        `delete from idempotency_record r using (
           select project_id, key from idempotency_record where expires_at < ?
            limit ? for update skip locked
         ) x where r.project_id = x.project_id and r.key = x.key`,
        [now, size],
      ),
    );
    // A webhook event's deliveries go with it (cascade). Retries end at 24 hours: only a
    // disabled endpoint's deliveries still wait a retention period on, and are given up.
    const webhookEvents = await this.#olderThan("webhook_event", "created_at", cutoff);
    const webhookAttempts = await this.#olderThan("webhook_attempt", "attempted_at", cutoff);
    // Device logins an hour past their expiry: polling answers `expired_token` with or without
    // the row, and its user code becomes free for new logins. Pairing codes and setup links
    // answer the same without theirs.
    const deviceLogins = await this.#count("delete from device_login where expires_at < ?", [
      hourAgo,
    ]);
    await this.#db.execute("delete from pairing_code where expires_at < ?", [hourAgo]);
    await this.#db.execute("delete from setup_link where expires_at < ?", [hourAgo]);
    // Rate buckets untouched for an hour are full again: their rows only take room.
    await this.#db.execute("delete from rate_bucket where updated_at < ?", [hourAgo]);
    return { notifications, idempotencyRecords, deviceLogins, webhookEvents, webhookAttempts };
  }

  /** The rows of `table` (keyed by `id`) whose `column` is before `cutoff`, in batches. */
  #olderThan(table: string, column: string, cutoff: Date): Promise<number> {
    return this.#inBatches((size) =>
      this.#count(
        `delete from ${table} t using (
           select id from ${table} where ${column} < ? limit ? for update skip locked
         ) x where t.id = x.id`,
        [cutoff, size],
      ),
    );
  }

  /**
   * Runs `once` (a batch of at most `size` rows) until a batch comes back short; what it deleted
   * in all. A batch cancelled at the deadline goes again at half the size, down to one row.
   */
  async #inBatches(once: (size: number) => Promise<number>): Promise<number> {
    let [total, size] = [0, batch];
    for (;;) {
      let n: number;
      try {
        n = await once(size);
      } catch (err) {
        if (size === 1 || !isStatementCancelled(err)) throw err;
        size = Math.ceil(size / 2);
        continue;
      }
      total += n;
      if (n < size) return total;
    }
  }

  /** The rows a `delete` statement (without `returning`) deletes. */
  async #count(deletion: string, params: unknown[]): Promise<number> {
    const rows = await this.#db.execute<{ n: string | number }[]>(
      `with gone as (${deletion} returning 1) select count(*) as n from gone`,
      params,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * One batch of notifications created before `cutoff`; their deliveries go with them (cascade)
   * and their number is added to the account's month in `usage_purged`. The id bound (ids are
   * UUIDv7, time-ordered) lets the primary key find them; `created_at` decides.
   */
  async #purgeNotifications(cutoff: Date, size: number): Promise<number> {
    const rows = await this.#db.execute<{ n: string | number }[]>(
      `with gone as (
         delete from notification n using (
           select id from notification
            where id < ?::uuid and created_at < ?
            order by id limit ? for update skip locked
         ) x where n.id = x.id
         returning n.project_id, n.created_at
       ), counted as (
         insert into usage_purged (account_id, month, notifications)
         select p.account_id, date_trunc('month', g.created_at at time zone 'UTC')::date, count(*)
           from gone g join project p on p.id = g.project_id
          group by 1, 2
         on conflict (account_id, month)
           do update set notifications = usage_purged.notifications + excluded.notifications
         returning 1
       )
       select (select count(*) from gone) as n, (select count(*) from counted) as months`,
      [uuidv7Floor(cutoff.getTime() + 1), cutoff, size],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
