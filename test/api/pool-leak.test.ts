/**
 * A transaction under way when the database goes away gives its connection back: repeated
 * outages never shrink the pool (Kysely's controlled transactions release a connection only
 * when BEGIN, COMMIT or ROLLBACK succeeds; db/pool-guard.ts). Found as a test whose server
 * never finished closing after a database outage.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Orm, openDatabase } from "../../src/db/orm.ts";
import { freshDatabase } from "../helpers/db.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let proxy: TcpProxy;
let orm: Orm;
beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  const pg = new URL(inject("pgServerUrl"));
  proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${proxy.port}`;
  orm = await openDatabase({ url: url.toString(), poolSize: 2 });
});
afterAll(async () => {
  await proxy.close();
});

describe("a transaction met by a database outage", () => {
  it("gives its connection back: after more outages than the pool has connections, it serves and closes", async () => {
    for (let i = 0; i < 4; i++) {
      let inside: () => void = () => {};
      const entered = new Promise<void>((r) => {
        inside = r;
      });
      const failed = orm.em
        .fork()
        .transactional(async (em) => {
          await em.execute("select 1");
          inside();
          // The database goes away while the transaction holds its connection.
          await new Promise((r) => setTimeout(r, 200));
          await em.execute("select 2");
        })
        .then(
          () => "committed",
          () => "failed",
        );
      await entered;
      await proxy.down();
      expect(await failed).toBe("failed");
      await proxy.up();
    }
    const [row] = await orm.em.getConnection().execute<{ n: number }[]>("select 41 + 1 as n");
    expect(row?.n).toBe(42);
    const closed = await Promise.race([
      orm.close().then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still waiting"), 5_000)),
    ]);
    expect(closed).toBe("closed");
  }, 30_000);
});
