/**
 * The delivery worker's probe (db/deliveries/due-probe.ts) reads the tables as they are, not as
 * they were when a connection first asked it. A plan kept from a young `notification` table (a
 * few rows, no statistics yet) read it whole for the repeats and escalations on every later
 * probe: 26 ms a probe at 100,000 rows, five probes a second under load, until autovacuum's
 * first ANALYZE (BENCHMARKS.md, thirty-fifth session).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { probeDue } from "../../src/db/deliveries/due-probe.ts";
import { bound, type Orm, openDatabase } from "../../src/db/orm.ts";
import { freshDatabase, sql } from "../helpers/db.ts";

const account = "00000000-0000-4000-8000-000000000011";
const project = "00000000-0000-4000-8000-000000000012";
let url: string;
let orm: Orm;

beforeAll(async () => {
  url = await freshDatabase();
  await sql(url, `insert into account (id, email) values ('${account}', 'probe@example.com')`);
  await sql(
    url,
    `insert into project (id, account_id, name) values ('${project}', '${account}', 'probe')`,
  );
  // One connection: every statement below runs in the probe's own session.
  orm = await openDatabase({ url, poolSize: 1, migrate: false });
});
afterAll(async () => orm.close());

/** Publishes that ask for nothing later (no repeat, no escalation), as a benchmark's do. */
const publish = (n: number) =>
  sql(
    url,
    `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
     select gen_random_uuid(), '${project}', 'bulk', 'bulk', '', 'normal', 'sent', now()
       from generate_series(1, ${n})`,
  );

/** Rows of `notification` one probe reads by scanning the table whole. */
async function scannedByProbe(): Promise<number> {
  const db = orm.em.getConnection();
  await bound(db, "begin", []);
  try {
    await probeDue(db);
    const [row] = await bound<{ n: string }>(
      db,
      "select seq_tup_read as n from pg_stat_xact_user_tables where relname = 'notification'",
      [],
    );
    return Number(row?.n);
  } finally {
    await bound(db, "rollback", []);
  }
}

it("reads a grown table by its indexes, though first asked when it held a few rows", async () => {
  await publish(5);
  // Asked while the table is young: a plan kept from now would read it whole from now on.
  await scannedByProbe();
  await publish(20_000);
  expect(await scannedByProbe()).toBeLessThan(1000);
});
