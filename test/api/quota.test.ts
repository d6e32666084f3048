import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UsageRepository } from "../../src/db/repositories/usage.ts";
import { uuidv7 } from "../../src/domain/ids.ts";
import { sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ monthlyQuota: 3 });
});
afterAll(async () => server.close());

describe("the monthly quota", () => {
  it("refuses the publish past the quota with 429 quota_exceeded, still replays, reports usage", async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await notify(server, { title: `n${i}` }, { "idempotency-key": `q${i}` })).status,
      ).toBe(202);
    }
    const over = await notify(server, { title: "one too many" });
    expect(over.status).toBe(429);
    expect(over.json.code).toBe("quota_exceeded");
    const retry = Number(over.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(31 * 86400);
    // A retry of an earlier publish is not a new notification: it still gets its replay.
    const replay = await notify(server, { title: "n0" }, { "idempotency-key": "q0" });
    expect(replay.status).toBe(200);

    const usage = await body(
      await fetch(`${server.url}/v1/usage`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      }),
    );
    expect(usage).toMatchObject({ plan: "free", notifications_used: 3, notifications_quota: 3 });
    expect(Date.parse(usage.period_end)).toBeGreaterThan(Date.now());
  });
  it("answers a stale count at once and recounts in the background", async () => {
    const [{ account_id: accountId }] = (await sql<{ account_id: string }>(
      server.databaseUrl,
      "select account_id from project where id = $1",
      [server.projectId],
    )) as [{ account_id: string }];
    const usage = new UsageRepository(server.orm);
    const t0 = new Date();
    const first = await usage.used(accountId, t0);
    // Another process publishes two more (with time-ordered ids, as Herald makes them: the
    // month is an id range, and a random v4 id may fall before the month's first).
    await sql(
      server.databaseUrl,
      `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
       select id, $1, 'other', 'elsewhere', '', 'normal', 'queued', now()
         from unnest($2::uuid[]) as id`,
      [server.projectId, [uuidv7(), uuidv7()]],
    );
    // Within the refresh interval: the cached count, no recount.
    expect(await usage.used(accountId, new Date(t0.getTime() + 1000))).toBe(first);
    // Past it: still the cached count at once, while the recount runs...
    const later = new Date(t0.getTime() + 6000);
    expect(await usage.used(accountId, later)).toBe(first);
    // ...and then the recounted one.
    let seen = first;
    for (let i = 0; i < 100 && seen === first; i++) {
      await new Promise((r) => setTimeout(r, 20));
      seen = await usage.used(accountId, later);
    }
    expect(seen).toBe(first + 2);
  });
});
