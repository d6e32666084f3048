/**
 * Notifications an account published this month, as the account page shows them (the quota is
 * enforced by the shared ledger, quota.ts). Counting is an index range scan per project (ids
 * are time-ordered UUIDv7, so "this month" is an id range); counts are cached per account for a
 * few seconds and advanced locally on each publish.
 */

import { monotonicMs } from "../../domain/clock.ts";
import { monthOf, uuidv7Floor } from "../../domain/month.ts";
import type { Orm } from "../orm.ts";

const refreshMs = 5_000;

/**
 * An account's notifications of a month, as SQL (parameters: monthCountParams): ids from the
 * month's first millisecond up to the next month's, so a month counted after it ended (a past
 * month's usage; a ledger opened at the month's last instant, when another process has already
 * published in the next) counts its own and no later ones. What the retention purge deleted of
 * this month still counts (usage_purged).
 */
export const monthCount = `(
  (select count(*) from notification n join project p on p.id = n.project_id
    where p.account_id = ? and n.id >= ?::uuid and n.id < ?::uuid)
  + coalesce((select notifications from usage_purged where account_id = ? and month = ?::date), 0))`;

export function monthCountParams(accountId: string, monthStart: number): string[] {
  const { start, end } = monthOf(new Date(monthStart));
  const month = start.toISOString().slice(0, 10);
  return [accountId, uuidv7Floor(start.getTime()), uuidv7Floor(end.getTime()), accountId, month];
}

interface Entry {
  used: number;
  monthStart: number;
  fetchedMs: number;
  refreshing?: Promise<void>;
}

export class UsageRepository {
  readonly #orm: Orm;
  readonly #cache = new Map<string, Entry>();
  /** First counts under way, one per account, however many publishes wait for it. */
  readonly #loading = new Map<string, Promise<Entry>>();

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  /**
   * Notifications published this month by the account's projects. A stale count is answered at
   * once and recounted in the background (one count per account at a time): a publish waits for
   * a count only for the first of an account in this process, or of a new month. (A count over a
   * busy month takes long enough that every publish arriving meanwhile used to wait for it, and
   * start its own: stalls of 100–200 ms every 5 s under load.)
   */
  async used(accountId: string, now = new Date()): Promise<number> {
    const monthStart = monthOf(now).start.getTime();
    const cached = this.#cache.get(accountId);
    if (cached && cached.monthStart === monthStart) {
      if (now.getTime() - cached.fetchedMs >= refreshMs) this.#refresh(accountId, cached);
      return cached.used;
    }
    let loading = this.#loading.get(accountId);
    if (!loading) {
      loading = this.#count(accountId, monthStart)
        .then((used) => {
          const entry = { used, monthStart, fetchedMs: monotonicMs() };
          this.#cache.set(accountId, entry);
          return entry;
        })
        .finally(() => this.#loading.delete(accountId));
      this.#loading.set(accountId, loading);
    }
    return (await loading).used;
  }

  /** Counts a publish that this process just committed. */
  record(accountId: string): void {
    const entry = this.#cache.get(accountId);
    if (entry) entry.used += 1;
  }

  #refresh(accountId: string, entry: Entry): void {
    entry.refreshing ??= this.#count(accountId, entry.monthStart)
      .then((n) => {
        // Both are lower bounds of the truth: the count as of its snapshot, and the earlier
        // count plus this process's publishes since. The larger is the better one.
        entry.used = Math.max(entry.used, n);
        entry.fetchedMs = monotonicMs();
      })
      // The estimate stays and the next publish tries again; a database that fails here fails
      // the publish itself too, which reports it.
      .catch(() => {})
      .finally(() => {
        entry.refreshing = undefined;
      });
  }

  async #count(accountId: string, monthStart: number): Promise<number> {
    const rows = await this.#orm.em
      .getConnection()
      .execute<{ n: string | number }[]>(
        `select ${monthCount} as n`,
        monthCountParams(accountId, monthStart),
      );
    return Number(rows[0]?.n ?? 0);
  }
}
