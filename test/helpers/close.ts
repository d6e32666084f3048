import type { FastifyInstance } from "fastify";
import type { Pool, PoolClient } from "pg";
import type { Orm } from "../../src/db/orm.ts";
import { sql } from "./db.ts";

/** pg's own state of a pooled client, read for the report only. */
type ClientState = PoolClient & {
  _connecting?: boolean;
  _connected?: boolean;
  _queryable?: boolean;
  _ending?: boolean;
  activeQuery?: { text?: string } | null;
  queryQueue?: unknown[];
  processID?: number;
};
type PoolState = Pool & { _clients: ClientState[]; _idle: { client: ClientState }[] };

/** Where each checked-out client was asked for, and the asks not answered yet. */
const origins = new WeakMap<object, string>();
const unanswered = new WeakMap<object, Set<string>>();

const callerStack = () => {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 30;
  const stack = new Error("checked out").stack ?? "";
  Error.stackTraceLimit = limit;
  return stack.split("\n").slice(2).join(" | ");
};

/**
 * Records who checks out each of the pool's connections (the caller's stack, async frames
 * included), for the report of a close that waits on one never given back.
 */
export async function traceCheckouts(orm: Orm): Promise<void> {
  const pool = (await orm.em.getConnection().getNativeClient()) as PoolState;
  const asks = new Set<string>();
  unanswered.set(pool, asks);
  // Each form passes on as it came: the promise form is the one db/pool-guard.ts guards.
  const connect = pool.connect.bind(pool) as Pool["connect"];
  const traced = (callback?: Parameters<Pool["connect"]>[0]) => {
    const stack = callerStack();
    asks.add(stack);
    const answered = (client?: PoolClient) => {
      asks.delete(stack);
      if (client) origins.set(client, stack);
    };
    if (callback) {
      return connect((err, client, done) => {
        answered(client);
        callback(err, client, done);
      });
    }
    return connect().then(
      (client) => {
        answered(client);
        return client;
      },
      (err: unknown) => {
        answered();
        throw err;
      },
    );
  };
  pool.connect = traced as unknown as Pool["connect"];
}

/** The pool's clients that are not idle: pg's state of each, and who asked for it. */
function checkedOut(pool: PoolState): string {
  const idle = new Set(pool._idle.map((i) => i.client));
  const clients = pool._clients
    .filter((c) => !idle.has(c))
    .map((c) => ({
      pid: c.processID,
      connecting: c._connecting,
      connected: c._connected,
      queryable: c._queryable,
      ending: c._ending,
      active: c.activeQuery?.text?.slice(0, 160) ?? null,
      queued: c.queryQueue?.length,
      origin: origins.get(c) ?? "(not recorded)",
    }));
  const asks = [...(unanswered.get(pool) ?? [])];
  return JSON.stringify({ clients, unanswered: asks });
}

/** What every other session of the database is doing, read on a connection of its own. */
async function sessions(databaseUrl: string): Promise<string> {
  try {
    const rows = await sql(
      databaseUrl,
      `select pid, application_name, state, wait_event_type, wait_event,
              now() - xact_start as in_transaction, left(query, 160) as query
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    );
    return JSON.stringify(rows);
  } catch (err) {
    return `(could not read pg_stat_activity: ${String(err)})`;
  }
}

/**
 * Closes a test server, app then pool. A step still running after 15 s says so on stderr, with
 * the pool's counts, the server's open connections, what keeps the process busy and what each
 * session of the database is doing: a hang in a file's teardown otherwise shows only as its
 * afterAll hook's 60 s timeout, without saying where.
 */
export async function closeApp(
  name: string,
  app: FastifyInstance,
  orm: Orm,
  databaseUrl: string,
): Promise<void> {
  const step = async (what: string, run: () => Promise<void>) => {
    const timer = setTimeout(async () => {
      const pool = (await orm.em.getConnection().getNativeClient()) as PoolState;
      const open = await new Promise<number>((resolve) =>
        app.server.getConnections((_err, n) => resolve(n ?? -1)),
      );
      const resources = process.getActiveResourcesInfo().join(", ");
      process.stderr.write(
        `test ${name}: ${what} has run 15 s: pool ${pool.totalCount} connections, ${pool.idleCount} idle, ${pool.waitingCount} waiting; server ${open} open connections; active: ${resources}; checked out: ${checkedOut(pool)}; the database's sessions: ${await sessions(databaseUrl)}\n`,
      );
    }, 15_000);
    try {
      await run();
    } finally {
      clearTimeout(timer);
    }
  };
  await step("app.close()", () => app.close());
  await step("orm.close()", () => orm.close());
}
