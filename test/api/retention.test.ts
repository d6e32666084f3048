/**
 * Retention: notifications older than the retention period go, with their deliveries; expired
 * idempotency records go; what is kept stays; and the month's quota still counts what went.
 * Webhook events (with their deliveries) and attempts go at the same age; so do pairing codes
 * and setup links long expired. Before, those tables grew for as long as Herald ran.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RetentionRepository } from "../../src/db/repositories/retention.ts";
import { UsageRepository } from "../../src/db/repositories/usage.ts";
import { uuidv7, uuidv7At } from "../../src/domain/ids.ts";
import { monthOf } from "../../src/domain/month.ts";
import { sql, withDeadline } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ workerEnabled: false });
});
afterAll(async () => server.close());

const day = 86_400_000;

async function notificationAt(at: Date): Promise<string> {
  const id = uuidv7At(at.getTime());
  await sql(
    server.databaseUrl,
    `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
     values ($1, $2, 'old', 'from the past', '', 'normal', 'delivered', $3)`,
    [id, server.projectId, at],
  );
  return id;
}

describe("retention", () => {
  it("deletes notifications past the retention period, keeps the rest, and still counts them in the quota", async () => {
    const now = new Date();
    const at = [31, 40, 29].map((days) => new Date(now.getTime() - days * day));
    const [old1, old2, kept] = await Promise.all(at.map(notificationAt));
    const [device] = await sql<{ id: string }>(
      server.databaseUrl,
      `insert into device (id, account_id, name, platform, credential_digest, credential_prefix)
       select $1, account_id, 'retention phone', 'stream', $2, 'hd_ret' from project where id = $3
       returning id`,
      [uuidv7(), Buffer.alloc(32, 7), server.projectId],
    );
    await sql(
      server.databaseUrl,
      "insert into delivery (notification_id, device_id, platform, state) values ($1, $2, 'stream', 'sent'), ($3, $2, 'stream', 'sent')",
      [old1, device?.id, kept],
    );
    const [{ account_id: accountId }] = (await sql<{ account_id: string }>(
      server.databaseUrl,
      "select account_id from project where id = $1",
      [server.projectId],
    )) as [{ account_id: string }];
    // The months of the two old ones (the same month or two), counted before the purge.
    const months = [new Date(now.getTime() - 31 * day), new Date(now.getTime() - 40 * day)];
    const counts = async () =>
      Promise.all(months.map((m) => new UsageRepository(server.orm).used(accountId, m)));
    const beforePurge = await counts();
    // Each month its own: a past month counts none of the later months' notifications.
    const ofMonth = (m: Date) => monthOf(m).start.getTime();
    expect(beforePurge).toEqual(
      months.map((m) => at.filter((t) => ofMonth(t) === ofMonth(m)).length),
    );

    const purged = await new RetentionRepository(server.orm).purge(30, now);
    expect(purged.notifications).toBe(2);
    const left = await sql<{ id: string }>(
      server.databaseUrl,
      "select id from notification where id = any($1::uuid[]) order by id",
      [[old1, old2, kept]],
    );
    expect(left.map((r) => r.id)).toEqual([kept]);
    const deliveries = await sql<{ notification_id: string }>(
      server.databaseUrl,
      "select notification_id from delivery where device_id = $1",
      [device?.id],
    );
    expect(deliveries.map((d) => d.notification_id)).toEqual([kept]);
    // Those months' counts, from a fresh cache: the purged rows still count.
    expect(await counts()).toEqual(beforePurge);
    // And a second purge finds nothing more.
    expect((await new RetentionRepository(server.orm).purge(30, now)).notifications).toBe(0);
    // The API no longer knows the purged notification.
    const gone = await fetch(`${server.url}/v1/notifications/${old1}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(gone.status).toBe(404);
  });

  it("deletes expired idempotency records, so their key can be used afresh", async () => {
    const first = await notify(server, { title: "once" }, { "idempotency-key": "retention-key" });
    expect(first.status).toBe(202);
    const live = await notify(server, { title: "live" }, { "idempotency-key": "still-live" });
    expect(live.status).toBe(202);
    await sql(
      server.databaseUrl,
      "update idempotency_record set expires_at = now() - interval '1 minute' where key = 'retention-key'",
    );
    const purged = await new RetentionRepository(server.orm).purge(30);
    expect(purged.idempotencyRecords).toBe(1);
    const keys = await sql<{ key: string }>(
      server.databaseUrl,
      "select key from idempotency_record where key in ('retention-key', 'still-live') order by key",
    );
    expect(keys.map((k) => k.key)).toEqual(["still-live"]);
    const again = await notify(
      server,
      { title: "a new one" },
      { "idempotency-key": "retention-key" },
    );
    expect(again.status).toBe(202);
    expect(again.json.id).not.toBe(first.json.id);
    expect(
      (
        await body(
          await fetch(`${server.url}/v1/notifications/${first.json.id}`, {
            headers: { authorization: `Bearer ${server.apiKey}` },
          }),
        )
      ).id,
    ).toBe(first.json.id);
  });
  it("deletes device logins an hour past their expiry; polling them still says expired_token", async () => {
    const start = await body(
      await fetch(`${server.url}/v1/auth/device`, { method: "POST", body: "{}" }),
    );
    expect(start.device_code).toBeTruthy();
    await sql(
      server.databaseUrl,
      "update device_login set expires_at = now() - interval '2 hours'",
    );
    const purged = await new RetentionRepository(server.orm).purge(30);
    expect(purged.deviceLogins).toBeGreaterThanOrEqual(1);
    expect(await sql(server.databaseUrl, "select 1 from device_login")).toHaveLength(0);
    const poll = await fetch(`${server.url}/v1/auth/device/token`, {
      method: "POST",
      body: JSON.stringify({ device_code: start.device_code }),
    });
    expect(poll.status).toBe(200);
    expect((await body(poll)).status).toBe("expired_token");
  });

  it("deletes webhook events and attempts past the retention period, pairing codes and setup links long expired", async () => {
    const db = server.databaseUrl;
    const [endpoint] = await sql<{ id: string }>(
      db,
      `insert into webhook_endpoint (id, project_id, url, event_types, secret_key_id, secret_box)
       values ($1, $2, 'https://hooks.example.com/retention', '{notification.sent}', 'k', '\\x00')
       returning id`,
      [uuidv7(), server.projectId],
    );
    const event = async (daysAgo: number) => {
      const [row] = await sql<{ id: string }>(
        db,
        `insert into webhook_event (project_id, type, subject, payload, created_at)
         values ($1, 'notification.sent', $2, '{}', now() - $3 * interval '1 day') returning id`,
        [server.projectId, uuidv7(), daysAgo],
      );
      await sql(
        db,
        `insert into webhook_delivery (event_id, endpoint_id, state) values ($1, $2, 'delivered')`,
        [row?.id, endpoint?.id],
      );
      await sql(
        db,
        `insert into webhook_attempt (event_id, endpoint_id, status_code, duration_ms, attempted_at)
         values ($1, $2, 200, 5, now() - $3 * interval '1 day')`,
        [row?.id, endpoint?.id, daysAgo],
      );
      return row?.id as string;
    };
    const [old, kept] = [await event(31), await event(29)];
    const [account] = await sql<{ account_id: string }>(
      db,
      "select account_id from project where id = $1",
      [server.projectId],
    );
    await sql(
      db,
      `insert into pairing_code (code, account_id, expires_at) values
         ('RETOLD', $1, now() - interval '2 hours'), ('RETNEW', $1, now() + interval '5 minutes')`,
      [account?.account_id],
    );
    await sql(
      db,
      `insert into setup_link (digest, account_id, expires_at) values
         ('\\x01', $1, now() - interval '2 hours'), ('\\x02', $1, now() + interval '1 day')`,
      [account?.account_id],
    );
    const purged = await new RetentionRepository(server.orm).purge(30);
    expect(purged.webhookEvents).toBe(1);
    expect(purged.webhookAttempts).toBe(1);
    const ids = async (q: string) => (await sql<{ id: string }>(db, q)).map((r) => r.id);
    expect(await ids("select id from webhook_event")).toEqual([kept]);
    expect(await ids("select event_id as id from webhook_delivery")).toEqual([kept]);
    expect(await ids("select event_id as id from webhook_attempt")).toEqual([kept]);
    expect(old).not.toBe(kept);
    expect(await ids("select code as id from pairing_code where code like 'RET%'")).toEqual([
      "RETNEW",
    ]);
    expect(
      await ids(
        "select encode(digest, 'hex') as id from setup_link where digest in ('\\x01', '\\x02')",
      ),
    ).toEqual(["02"]);
  });

  it("gets through batches too large for the statement deadline, at half the size each time", async () => {
    const db = server.databaseUrl;
    const old = new Date(Date.now() - 40 * day);
    const ids = await Promise.all(Array.from({ length: 30 }, () => notificationAt(old)));
    // A delete of more than 10 notifications in one statement outlasts the deadline, as a batch
    // whose deliveries number in the millions would.
    await sql(
      db,
      `create function test_slow_purge() returns trigger language plpgsql as $$
       begin
         if (select count(*) from gone) > 10 then perform pg_sleep(5); end if;
         return null;
       end $$;
       create trigger test_slow_purge after delete on notification
         referencing old table as gone for each statement execute function test_slow_purge()`,
    );
    const orm = await withDeadline(db);
    try {
      const purged = await new RetentionRepository(orm).purge(30);
      expect(purged.notifications).toBe(ids.length);
      expect(
        await sql(db, "select id from notification where id = any($1::uuid[])", [ids]),
      ).toEqual([]);
    } finally {
      await orm.close();
      await sql(
        db,
        "drop trigger test_slow_purge on notification; drop function test_slow_purge()",
      );
    }
  });
});
