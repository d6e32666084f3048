/**
 * The per-credential rate limit shared by every process on the database: one token bucket row
 * per key in PostgreSQL (`rate_bucket`, unlogged), from which each process leases a few tokens
 * at a time and spends them from memory. So the limit holds however many processes or machines
 * serve (never more is admitted than the shared bucket gave out), and a request costs a database
 * round trip only when its process's lease is spent: one in every `lease` requests of a key.
 * Tokens a process leased but did not spend within a second go back to the bucket.
 */

import { monotonicMs } from "../../domain/clock.ts";
import type { FailureCounter } from "../../domain/failed-auth.ts";
import type { Buckets } from "../../domain/login-limiter.ts";
import { type RateLimiter, type TakeResult, takeResult } from "../../domain/token-bucket.ts";
import type { Orm } from "../orm.ts";

/*
 * Refills the bucket for the time passed, then grants up to $want whole tokens of it. A clock
 * stepped back counts as no time passed (not as a debt of an hour's tokens).
 */
const leaseStatement = `
  insert into rate_bucket as b (key, tokens, granted, updated_at)
  values (?, ?::float8 - least(?::int, ?::float8), least(?::int, ?::float8)::int, now())
  on conflict (key) do update set
    granted = least(?::int, floor(least(?::float8, b.tokens + greatest(0, extract(epoch from now() - b.updated_at)) * ?::float8)))::int,
    tokens = least(?::float8, b.tokens + greatest(0, extract(epoch from now() - b.updated_at)) * ?::float8)
             - least(?::int, floor(least(?::float8, b.tokens + greatest(0, extract(epoch from now() - b.updated_at)) * ?::float8))),
    updated_at = now()
  returning granted, tokens`;

const giveBackStatement = `
  update rate_bucket set tokens = least(?::float8, tokens + ?::float8) where key = ?`;

const peekStatement = `
  select least(?::float8, tokens + greatest(0, extract(epoch from now() - updated_at)) * ?::float8) as tokens
    from rate_bucket where key = ?`;

/**
 * Buckets read and spent in PostgreSQL on every use, without leases: for the login throttles,
 * whose events (a password tried) are rare and must count exactly across processes.
 */
export class SharedBuckets implements Buckets {
  readonly #orm: Orm;
  readonly #name: string;
  readonly #burst: number;
  readonly #perSecond: number;

  constructor(orm: Orm, name: string, burst: number, perSecond: number) {
    this.#orm = orm;
    this.#name = name;
    this.#burst = burst;
    this.#perSecond = perSecond;
  }

  async peek(key: string): Promise<TakeResult> {
    const [row] = await this.#orm.em
      .getConnection()
      .execute<{ tokens: number }[]>(peekStatement, [this.#burst, this.#perSecond, this.#key(key)]);
    const tokens = row ? Number(row.tokens) : this.#burst;
    return takeResult(tokens, tokens >= 1, this.#burst, this.#perSecond);
  }

  async take(key: string): Promise<TakeResult> {
    const { granted, tokens } = await leaseTokens(
      this.#orm,
      this.#key(key),
      1,
      this.#burst,
      this.#perSecond,
    );
    return takeResult(tokens, granted > 0, this.#burst, this.#perSecond);
  }

  #key(key: string): string {
    return `${this.#name}:${key}`;
  }
}

/** Leases up to `want` tokens of the key's shared bucket; says how many, and what is left. */
async function leaseTokens(orm: Orm, key: string, want: number, burst: number, perSecond: number) {
  const [b, w, r] = [burst, want, perSecond];
  const [row] = await orm.em
    .getConnection()
    .execute<{ granted: number; tokens: number }[]>(leaseStatement, [
      key,
      b,
      w,
      b,
      w,
      b,
      w,
      b,
      r,
      b,
      r,
      w,
      b,
      r,
    ]);
  return { granted: Number(row?.granted ?? 0), tokens: Number(row?.tokens ?? 0) };
}

interface Lease {
  tokens: number;
  /** Tokens left in the shared bucket when this lease was taken. */
  shared: number;
  takenMs: number;
  /** What the last lease statement granted (0: the shared bucket is empty). */
  lastGranted: number;
}

export class SharedRateLimiter implements RateLimiter {
  readonly burst: number;
  readonly perSecond: number;
  readonly #orm: Orm;
  readonly #lease: number;
  readonly #leases = new Map<string, Lease>();
  readonly #pending = new Map<string, Promise<Lease>>();
  readonly #timer: NodeJS.Timeout;

  constructor(orm: Orm, burst: number, perSecond: number) {
    this.#orm = orm;
    this.burst = burst;
    this.perSecond = perSecond;
    // A twentieth of the burst: what processes hold unspent is a few percent of the limit.
    this.#lease = Math.max(1, Math.floor(burst / 20));
    this.#timer = setInterval(() => void this.#giveBackStale(), 1000);
    this.#timer.unref();
  }

  /** Gives every unspent token back; called when the server closes, before the database. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#giveBackStale(0);
  }

  async take(key: string): Promise<TakeResult> {
    let lease = this.#leases.get(key);
    // Requests arriving together share one lease statement; those it did not cover ask again,
    // until the shared bucket grants nothing.
    while (!lease || lease.tokens < 1) {
      let pending = this.#pending.get(key);
      if (!pending) {
        pending = this.#leaseMore(key).finally(() => this.#pending.delete(key));
        this.#pending.set(key, pending);
      }
      lease = await pending;
      if (lease.lastGranted === 0) break;
    }
    const allowed = lease.tokens >= 1;
    if (allowed) lease.tokens -= 1;
    const remaining = Math.floor(lease.shared + lease.tokens);
    return {
      allowed,
      remaining,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - lease.shared) / this.perSecond)),
      resetSeconds: Math.ceil((this.burst - remaining) / this.perSecond),
    };
  }

  async #leaseMore(key: string): Promise<Lease> {
    const got = await leaseTokens(this.#orm, key, this.#lease, this.burst, this.perSecond);
    const held: Lease = {
      tokens: (this.#leases.get(key)?.tokens ?? 0) + got.granted,
      shared: got.tokens,
      takenMs: monotonicMs(),
      lastGranted: got.granted,
    };
    this.#leases.set(key, held);
    return held;
  }

  /** Unspent tokens leased over a second ago go back, so other processes can have them. */
  async #giveBackStale(olderThanMs = 1000): Promise<void> {
    const now = monotonicMs();
    for (const [key, lease] of this.#leases) {
      if (now - lease.takenMs < olderThanMs || this.#pending.has(key)) continue;
      this.#leases.delete(key);
      if (lease.tokens < 1) continue;
      await this.#orm.em
        .getConnection()
        .execute(giveBackStatement, [this.burst, Math.floor(lease.tokens), key])
        .catch(() => {}); // the bucket refills on its own; a lost give-back costs little
    }
  }
}

/*
 * One row per address: a failure count in a window of a minute from its first failure. A window
 * that starts after now (the clock was stepped back) has ended too.
 */
const failureStatement = `
  insert into rate_bucket as b (key, tokens, granted, updated_at) values (?, 0, 1, now())
  on conflict (key) do update set
    granted = case when b.updated_at <= now() - interval '1 minute' or b.updated_at > now()
                   then 1 else b.granted + 1 end,
    updated_at = case when b.updated_at <= now() - interval '1 minute' or b.updated_at > now()
                      then now() else b.updated_at end
  returning granted, extract(epoch from b.updated_at + interval '1 minute' - now()) * 1000 as reset_ms`;

/** The failed-authentication count shared by every process (domain/failed-auth.ts). */
export function sharedFailureCounter(orm: Orm): FailureCounter {
  return async (address) => {
    const [row] = await orm.em
      .getConnection()
      .execute<{ granted: number; reset_ms: number }[]>(failureStatement, [`auth-fail:${address}`]);
    return { count: Number(row?.granted ?? 1), resetMs: Math.max(0, Number(row?.reset_ms ?? 0)) };
  };
}
