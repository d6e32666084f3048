/**
 * The monthly quota, shared by every process and machine on the database. One ledger row per
 * account and month (`quota_ledger`) says how many publishes all processes together have
 * leased; a process leases a chunk and spends it from memory, so a publish costs a database
 * round trip only when its process's chunk is spent. A chunk is a sixteenth of what is left
 * (at most 100, at least 1), so near the end of a quota chunks are single publishes and what
 * processes hold unspent is a small part of the quota. Never more is accepted than the quota:
 * the ledger grants nothing beyond it. Unspent chunks go back after a few idle seconds and when
 * the server closes; a crashed process's chunk is lost for that month (at most a sixteenth of
 * what was left when it was taken).
 */

import { monotonicMs } from "../../domain/clock.ts";
import { monthOf } from "../../domain/month.ts";
import type { Orm } from "../orm.ts";
import { monthCount, monthCountParams } from "../repositories/usage.ts";

const maxChunk = 100;
/** Unspent chunks idle this long go back to the ledger. */
const idleMs = 5_000;
/** After the ledger granted nothing, how long a process answers "over quota" from memory. */
const exhaustedMs = 1_000;

/* Grants a chunk of what is left (in `granted`) and adds it to `leased`, in one row update. */
const leaseStatement = `
  update quota_ledger set
    granted = least(?::int, greatest(1, (?::int - leased) / 16), greatest(0, ?::int - leased)),
    leased = leased + least(?::int, greatest(1, (?::int - leased) / 16), greatest(0, ?::int - leased))
  where account_id = ? and month = ?::date
  returning granted`;

const openStatement = `
  insert into quota_ledger (account_id, month, leased)
  select ?, ?::date, ${monthCount}
  on conflict do nothing`;

const giveBackStatement = `
  update quota_ledger set leased = greatest(0, leased - ?) where account_id = ? and month = ?::date`;

interface Lease {
  month: string;
  tokens: number;
  usedMs: number;
  /** When the ledger last granted nothing (0: it has not). */
  exhaustedAt: number;
}

export class QuotaLedger {
  readonly #orm: Orm;
  readonly #quota: number;
  readonly #leases = new Map<string, Lease>();
  readonly #pending = new Map<string, Promise<number>>();
  readonly #timer: NodeJS.Timeout;

  constructor(orm: Orm, quota: number) {
    this.#orm = orm;
    this.#quota = quota;
    this.#timer = setInterval(() => void this.#giveBackIdle(idleMs), 1_000);
    this.#timer.unref();
  }

  /** Takes one publish of the account's month; false when the quota is used up. */
  async take(accountId: string, now = new Date()): Promise<boolean> {
    const month = monthKey(now);
    for (;;) {
      const lease = this.#lease(accountId, month);
      if (lease.tokens >= 1) {
        lease.tokens -= 1;
        lease.usedMs = monotonicMs();
        return true;
      }
      if (lease.exhaustedAt && monotonicMs() - lease.exhaustedAt < exhaustedMs) return false;
      // Publishes arriving together share one lease statement.
      let pending = this.#pending.get(accountId);
      if (!pending) {
        pending = this.#leaseMore(accountId, month).finally(() => this.#pending.delete(accountId));
        this.#pending.set(accountId, pending);
      }
      const granted = await pending;
      if (granted === 0 && this.#lease(accountId, month).tokens < 1) return false;
    }
  }

  /** Returns a publish taken but not made (a replay, a refusal, a failure). */
  giveBack(accountId: string, now = new Date()): void {
    const lease = this.#leases.get(accountId);
    if (lease?.month === monthKey(now)) lease.tokens += 1;
  }

  /** Gives every unspent chunk back; called when the server closes, before the database. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#giveBackIdle(0);
  }

  #lease(accountId: string, month: string): Lease {
    let lease = this.#leases.get(accountId);
    if (lease?.month !== month) {
      lease = { month, tokens: 0, usedMs: monotonicMs(), exhaustedAt: 0 };
      this.#leases.set(accountId, lease);
    }
    return lease;
  }

  async #leaseMore(accountId: string, month: string): Promise<number> {
    const db = this.#orm.em.getConnection();
    const q = this.#quota;
    const params = [maxChunk, q, q, maxChunk, q, q, accountId, month];
    let rows = await db.execute<{ granted: number }[]>(leaseStatement, params);
    if (rows.length === 0) {
      // The account's first publish of the month anywhere: open its row at the month's count.
      const start = Date.parse(`${month}T00:00:00Z`);
      await db.execute(openStatement, [accountId, month, ...monthCountParams(accountId, start)]);
      rows = await db.execute<{ granted: number }[]>(leaseStatement, params);
    }
    const granted = Number(rows[0]?.granted ?? 0);
    const lease = this.#lease(accountId, month);
    lease.tokens += granted;
    lease.exhaustedAt = granted === 0 ? monotonicMs() : 0;
    return granted;
  }

  async #giveBackIdle(olderThanMs: number): Promise<void> {
    const now = monotonicMs();
    for (const [accountId, lease] of this.#leases) {
      if (now - lease.usedMs < olderThanMs || this.#pending.has(accountId)) continue;
      this.#leases.delete(accountId);
      if (lease.tokens < 1) continue;
      await this.#orm.em
        .getConnection()
        .execute(giveBackStatement, [lease.tokens, accountId, lease.month])
        .catch(() => {}); // lost: the account gets that much less this month, never more
    }
  }
}

/** The month's key (its first day, `2026-11-01`), kept for the month it was last asked for. */
let lastMonth = { index: -1, key: "" };
function monthKey(now: Date): string {
  const index = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (index !== lastMonth.index) {
    lastMonth = { index, key: monthOf(now).start.toISOString().slice(0, 10) };
  }
  return lastMonth.key;
}
