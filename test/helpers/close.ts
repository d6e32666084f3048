import type { FastifyInstance } from "fastify";
import type { Orm } from "../../src/db/orm.ts";
import { sql } from "./db.ts";

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
      const pool = await orm.em.getConnection().getNativeClient();
      const open = await new Promise<number>((resolve) =>
        app.server.getConnections((_err, n) => resolve(n ?? -1)),
      );
      const resources = process.getActiveResourcesInfo().join(", ");
      process.stderr.write(
        `test ${name}: ${what} has run 15 s: pool ${pool.totalCount} connections, ${pool.idleCount} idle, ${pool.waitingCount} waiting; server ${open} open connections; active: ${resources}; the database's sessions: ${await sessions(databaseUrl)}\n`,
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
