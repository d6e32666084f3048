/**
 * The database handle: MikroORM over one pool, migrated on open. Entities serve the tables a
 * person manages one row at a time; the delivery path's set-based statements use the same pool
 * through `Db` (docs/decisions.md, "One ORM story").
 */
import { MikroORM } from "@mikro-orm/postgresql";
import pg, { type QueryResultRow } from "pg";
import { Account } from "./entities/account.ts";
import { ApiKey } from "./entities/api-key.ts";
import { CliToken } from "./entities/cli-token.ts";
import { Device } from "./entities/device.ts";
import { DeviceLogin } from "./entities/device-login.ts";
import { PairingCode } from "./entities/pairing-code.ts";
import { Project } from "./entities/project.ts";
import { SetupLink } from "./entities/setup-link.ts";
import { loadMigrations } from "./migrations/index.ts";
import { guardPool } from "./pool-guard.ts";
import { applyWebhookFunctions } from "./webhooks/payloads.ts";

export type Orm = MikroORM;

/**
 * The pool's deadline to hand out a connection: waiting for a free one, or opening a new one.
 * A database that stops answering (a storage stall, a network that drops packets, a process
 * held) then fails calls `unavailable` (503 with Retry-After) instead of holding them for as
 * long as it is silent: by hand, with PostgreSQL held by SIGSTOP, a publish and /readyz were
 * still unanswered after 40 s. Generous for any database that answers at all.
 */
const connectionDeadlineMs = 10_000;

/**
 * A serving process's statement deadline (`OpenOptions.statementDeadlineMs`): the connection's
 * 10 s, or longer than the longest a statement waits on purpose (an idempotent publish for its
 * key's holder, which must end in its own 409, not in this).
 */
export const servingStatementDeadlineMs = (longestWaitMs: number) =>
  Math.max(connectionDeadlineMs, longestWaitMs + 5_000);
/** The connection that runs raw statements (the pool behind the ORM). */
export type Db = ReturnType<Orm["em"]["getConnection"]>;

export interface OpenOptions {
  url: string;
  poolSize: number;
  /**
   * Which migrations to apply on open: all pending (the default), or up to and including the one
   * named (a restore loads its rows into the schema they were copied from, then migrates on).
   */
  migrateTo?: string;
  /**
   * False in a serving process: the supervisor migrated before forking it, so it loads neither
   * the migrator nor the migrations (megabytes of a process's idle memory).
   */
  migrate?: boolean;
  /**
   * Each statement's deadline on the pool's connections (PostgreSQL's `statement_timeout`, sent
   * when a connection opens), for a serving process. A table an operator locks (`LOCK TABLE`,
   * `VACUUM FULL`, a `CREATE INDEX` without CONCURRENTLY) held every publish's statement with no
   * end: a batch's own `lock_timeout` is set by the statement, after PostgreSQL has waited for
   * the table. The statement is then cancelled (nothing of it committed) and its call answered
   * `unavailable` with a Retry-After, and its connection goes back to the pool. Unset for the
   * supervisor and the operator's commands: migrations and a backup's copies take as long as
   * they take.
   */
  statementDeadlineMs?: number;
}

/** Connects, applies pending migrations, and returns the ORM. Never a global: pass it down. */
export async function openDatabase(opts: OpenOptions): Promise<Orm> {
  const migrate = opts.migrate ?? true;
  // The constructor, not MikroORM.init: init imports every optional extension installed
  // (@mikro-orm/migrations among them) whether asked for or not.
  const orm = new MikroORM({
    clientUrl: opts.url,
    entities: [Account, Project, ApiKey, CliToken, DeviceLogin, Device, PairingCode, SetupLink],
    extensions: migrate ? [(await import("@mikro-orm/migrations")).Migrator] : [],
    migrations: {
      migrationsList: migrate ? await loadMigrations() : [],
      tableName: "herald_migrations",
      silent: true,
      snapshot: false,
    },
    pool: { min: 0, max: opts.poolSize },
    driverOptions: {
      onPoolCreated: guardPool,
      connectionTimeoutMillis: connectionDeadlineMs,
      statement_timeout: opts.statementDeadlineMs,
    },
    allowGlobalContext: false,
    ensureDatabase: false,
  });
  if (!migrate) return orm;
  await oneAtATime(opts.url, async () => {
    await orm.migrator.up(opts.migrateTo === undefined ? undefined : { to: opts.migrateTo });
    if (opts.migrateTo === undefined) await applyWebhookFunctions(orm.em.getConnection());
  });
  return orm;
}

/**
 * Runs `migrate` while no other Herald migrates the same database: machines (or supervisors)
 * started together on one database each applied the same migrations at once, and all but one
 * failed to start (`duplicate key value violates unique constraint "pg_type_typname_nsp_index"`).
 * A session advisory lock on a connection of its own (a pool of one could not lend the migrator
 * another) makes the others wait, then find nothing left to apply. A process that dies holding
 * it lets it go with its connection.
 */
async function oneAtATime(url: string, migrate: () => Promise<void>): Promise<void> {
  const lock = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: connectionDeadlineMs,
  });
  // A connection lost while waiting fails the query; its error event has nothing to add.
  lock.on("error", () => undefined);
  await lock.connect();
  try {
    await lock.query("select pg_advisory_lock(hashtext('herald.migrations'))");
    await migrate();
  } finally {
    await lock.end();
  }
}

/**
 * A statement sent through pg itself, its parameters bound ($1, $2, …) rather than formatted into
 * the text as `Db.execute` does (MikroORM escapes each string parameter character by character:
 * a settle's JSON of a hundred outcomes was 8 % of a fan-out's allocations). With a `name`, a
 * prepared statement: each connection parses and plans it once.
 */
export async function bound<Row extends QueryResultRow>(
  db: Db,
  text: string,
  values: unknown[],
  name?: string,
): Promise<Row[]> {
  const pool = await db.getNativeClient();
  const res = await pool.query<Row>(name ? { name, text, values } : { text, values });
  return res.rows;
}
