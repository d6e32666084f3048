/**
 * The monthly notification quota. Counting is an index range scan per project (ids are
 * time-ordered UUIDv7, so "this month" is an id range). Counts are cached per account for a few
 * seconds and advanced locally on each publish: no hot counter row serialises publishers. The
 * price is softness: several processes together can exceed the quota by what they accept within
 * one refresh interval (docs/auth.md).
 */
import type { Orm } from "../db/orm.ts";
import { monthOf, uuidv7Floor } from "../domain/month.ts";

const refreshMs = 5_000;

interface Entry {
  used: number;
  monthStart: number;
  fetchedMs: number;
}

export class UsageStore {
  readonly #orm: Orm;
  readonly #cache = new Map<string, Entry>();

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  /** Notifications published this month by the account's projects. */
  async used(accountId: string, now = new Date()): Promise<number> {
    const { start } = monthOf(now);
    const cached = this.#cache.get(accountId);
    if (
      cached &&
      cached.monthStart === start.getTime() &&
      now.getTime() - cached.fetchedMs < refreshMs
    ) {
      return cached.used;
    }
    const rows = await this.#orm.em.getConnection().execute<{ n: string | number }[]>(
      `select count(*) as n from notification n join project p on p.id = n.project_id
        where p.account_id = ? and n.id >= ?::uuid`,
      [accountId, uuidv7Floor(start.getTime())],
    );
    const used = Number(rows[0]?.n ?? 0);
    this.#cache.set(accountId, { used, monthStart: start.getTime(), fetchedMs: now.getTime() });
    return used;
  }

  /** Counts a publish that this process just committed. */
  record(accountId: string): void {
    const entry = this.#cache.get(accountId);
    if (entry) entry.used += 1;
  }
}
