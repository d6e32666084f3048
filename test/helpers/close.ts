import type { FastifyInstance } from "fastify";
import type { Orm } from "../../src/db/orm.ts";

/**
 * Closes a test server, app then pool. A step still running after 15 s says so on stderr, with
 * the pool's counts, the server's open connections and what keeps the process busy: a hang in a
 * file's teardown otherwise shows only as its afterAll hook's 60 s timeout, without saying where.
 */
export async function closeApp(app: FastifyInstance, orm: Orm): Promise<void> {
  const step = async (what: string, run: () => Promise<void>) => {
    const timer = setTimeout(async () => {
      const pool = (await orm.em.getConnection().getNativeClient()) as unknown as {
        totalCount: number;
        idleCount: number;
        waitingCount: number;
      };
      const open = await new Promise<number>((resolve) =>
        app.server.getConnections((_err, n) => resolve(n ?? -1)),
      );
      const resources = process.getActiveResourcesInfo().join(", ");
      process.stderr.write(
        `test server: ${what} has run 15 s: pool ${pool.totalCount} connections, ${pool.idleCount} idle, ${pool.waitingCount} waiting; server ${open} open connections; active: ${resources}\n`,
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
