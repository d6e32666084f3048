/**
 * The claim's plan stays per row when the planner's statistics are stale (issue 24): after a
 * burst of publishes to two stream devices and then a fan-out to 10,000 phones, before
 * autovacuum or the worker's ANALYZE looks again (the statistics say two devices have copies), PostgreSQL reads each claimed row's device and notification by key,
 * never the whole device table or notification index (as a join it once did: 140-200 ms a
 * claim instead of 2; src/db/deliveries/claim-due.ts).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimStatement } from "../../src/db/deliveries/claim-due.ts";
import { freshDatabase } from "../helpers/db.ts";

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}

const account = "00000000-0000-4000-8000-000000000001";
const project = "00000000-0000-4000-8000-000000000002";
const fanned = "00000000-0000-4000-8000-000000000003";
let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: await freshDatabase() });
  await client.connect();
  await client.query(`insert into account (id, email) values ('${account}', 'plan@example.com')`);
  await client.query(
    `insert into project (id, account_id, name) values ('${project}', '${account}', 'plan')`,
  );
  // Earlier publishes (delivered long ago), then the devices, and statistics of that moment.
  await client.query(
    `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
     select gen_random_uuid(), '${project}', 'earlier', 'earlier', '', 'default', 'delivered', now()
       from generate_series(1, 200000)`,
  );
  await client.query(
    `insert into device (id, account_id, name, platform, credential_digest, credential_prefix,
                         token_key_id, token_box)
     select gen_random_uuid(), '${account}', 'phone ' || i, 'ios', sha256(i::text::bytea), 'x',
            'k1', decode(repeat('ab', 100), 'hex')
       from generate_series(1, 10000) i`,
  );
  // What the earlier publishes left in the delivery table: two stream devices' copies.
  await client.query(
    `insert into device (id, account_id, name, platform, credential_digest, credential_prefix)
     select gen_random_uuid(), '${account}', 'terminal ' || i, 'stream', sha256(('t' || i)::bytea), 'x'
       from generate_series(1, 2) i`,
  );
  await client.query(
    `insert into delivery (notification_id, device_id, platform, state, next_attempt_at)
     select n.id, d.id, 'stream', 'delivered', now()
       from (select id from notification limit 2000) n, device d where d.platform = 'stream'`,
  );
  await client.query("vacuum analyze");
  // The fan-out: one notification's 10,000 deliveries, due now, newer than the statistics.
  await client.query(
    `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
     values ('${fanned}', '${project}', 'fan-out', 'to every phone', '', 'default', 'delivering', now())`,
  );
  // Its first 2,000 deliveries, the statistics the worker's ANALYZE takes then (after 2,000
  // pushes), and the other 8,000.
  const deliveries = (range: string) =>
    client.query(
      `insert into delivery (notification_id, device_id, platform, next_attempt_at)
       select '${fanned}', id, platform, now() from (
         select id, platform, row_number() over (order by id) as i from device
          where platform = 'ios') d where ${range}`,
    );
  await deliveries("i <= 2000");
  await client.query("analyze delivery");
  await deliveries("i > 2000");
}, 60_000);
afterAll(async () => client.end());

/** Every node of the plan that reads `table`. */
function readsOf(node: PlanNode, table: string): PlanNode[] {
  const own = node["Relation Name"] === table ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap((p) => readsOf(p, table))];
}

describe("the claim's plan with stale statistics", () => {
  it("reads each claimed row's device and notification by key", async () => {
    const params = ["[]", 400, 200, 400, "{}", 30];
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `explain (format json) ${claimStatement}`,
      params,
    );
    const plan = rows[0]?.["QUERY PLAN"][0].Plan as PlanNode;
    for (const table of ["device", "notification"]) {
      const reads = readsOf(plan, table);
      expect(reads.length).toBeGreaterThan(0);
      for (const read of reads) {
        // An index lookup keyed by the row at hand (`= d.device_id`, `= c.notification_id`),
        // not a scan of the table or of its whole index.
        expect(read["Node Type"]).toMatch(/^Index (Only )?Scan$/);
        expect(read["Index Cond"]).toMatch(/\(id = [cd]\.(device|notification)_id\)/);
      }
    }
    // And the claim does claim: 200 of the window of 400, half the share.
    const claimed = await client.query(claimStatement, params);
    expect(claimed.rows).toHaveLength(200);
  });
});
