/**
 * Idempotency-Key on POST /v1/notify: replay, mismatch, scope per project, concurrency.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { addProjectWithKey, notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ idempotencyWaitMs: 1000 });
});
afterAll(async () => server.close());

const count = async (key: string) =>
  (
    await sql<{ n: number }>(
      server.databaseUrl,
      "select count(*)::int as n from notification n join idempotency_record r on r.notification_id = n.id where r.key = $1",
      [key],
    )
  )[0]?.n;

describe("Idempotency-Key", () => {
  it("replays the original answer byte for byte with 200 and creates nothing", async () => {
    const body = { title: "Build failed", metadata: { b: 1, a: [1, 2] }, ttl_seconds: 300 };
    const first = await notify(server, body, { "idempotency-key": "replay-1" });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await notify(server, body, { "idempotency-key": "replay-1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(await count("replay-1")).toBe(1);
  });

  it("ignores key order and whitespace when comparing bodies", async () => {
    const a = await notify(server, '{"title":"x","metadata":{"p":1,"q":2}}', {
      "idempotency-key": "order-1",
    });
    const b = await notify(server, '{ "metadata" : { "q":2, "p":1 },\n "title" : "x" }', {
      "idempotency-key": "order-1",
    });
    expect(a.status).toBe(202);
    expect(b.status).toBe(200);
    expect(b.json.id).toBe(a.json.id);
  });

  it("refuses the same key with a different body: 422 idempotency_key_reused", async () => {
    expect(
      (await notify(server, { title: "one" }, { "idempotency-key": "mismatch-1" })).status,
    ).toBe(202);
    const res = await notify(server, { title: "two" }, { "idempotency-key": "mismatch-1" });
    expect(res.status).toBe(422);
    expect(res.json.code).toBe("idempotency_key_reused");
    expect(await count("mismatch-1")).toBe(1);
  });

  it("is scoped per project: one key in two projects is two notifications", async () => {
    const other = await addProjectWithKey(server);
    const a = await notify(server, { title: "same" }, { "idempotency-key": "shared" });
    const b = await notify(
      server,
      { title: "same" },
      {
        "idempotency-key": "shared",
        authorization: `Bearer ${other.apiKey}`,
      },
    );
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.json.id).not.toBe(a.json.id);
    expect(b.json.project_id).toBe(other.projectId);
  });

  it("creates exactly one notification under 50 concurrent duplicates", async () => {
    const body = { title: "race", message: "only once" };
    const results = await Promise.all(
      Array.from({ length: 50 }, () => notify(server, body, { "idempotency-key": "race-50" })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.every((s) => s === 202 || s === 200)).toBe(true);
    const ids = new Set(results.map((r) => r.json.id));
    expect(ids.size).toBe(1);
    expect(await count("race-50")).toBe(1);
    const rows = await sql(
      server.databaseUrl,
      "select count(*)::int as n from notification where title = 'race'",
    );
    expect(rows[0]).toEqual({ n: 1 });
  });

  it("accepts 255 printable ASCII characters and refuses 256, empty or non-ASCII keys", async () => {
    expect(
      (await notify(server, { title: "k" }, { "idempotency-key": "k".repeat(255) })).status,
    ).toBe(202);
    for (const key of ["k".repeat(256), "caf\u00e9"]) {
      const res = await fetch(`${server.url}/v1/notify`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${server.apiKey}`,
          "idempotency-key": Buffer.from(key, "latin1").toString("latin1"),
        },
        body: JSON.stringify({ title: "k" }),
      });
      const json = await body(res);
      expect(res.status).toBe(400);
      expect(json.errors.map((e: { field: string }) => e.field)).toContain("Idempotency-Key");
    }
  });

  it("answers 409 idempotency_key_in_use when a duplicate cannot wait for the first", async () => {
    // Hold the key's row lock in a transaction, as a slow first request would.
    const pg = await import("pg");
    const holder = new pg.default.Client({ connectionString: server.databaseUrl });
    await holder.connect();
    await holder.query("begin");
    await holder.query(
      `insert into idempotency_record (project_id, key, fingerprint, notification_id, response, created_at, expires_at)
       values ($1, 'held', '\\x00', gen_random_uuid(), '\\x00', now(), now() + interval '1 day')`,
      [server.projectId],
    );
    try {
      const waited = Date.now();
      const res = await notify(server, { title: "held" }, { "idempotency-key": "held" });
      expect(res.status).toBe(409);
      expect(res.json.code).toBe("idempotency_key_in_use");
      expect(res.headers.get("retry-after")).toBe("1");
      expect(Date.now() - waited).toBeGreaterThanOrEqual(900);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
    expect((await notify(server, { title: "held" }, { "idempotency-key": "held" })).status).toBe(
      202,
    );
  });
  it("keeps its wait to the publish: the pool's other statements inherit no lock timeout", async () => {
    const conn = server.orm.em.getConnection();
    const rows = await Promise.all(
      Array.from({ length: 5 }, () =>
        conn.execute<{ lock_timeout: string }[]>("show lock_timeout"),
      ),
    );
    expect(rows.map((r) => r[0]?.lock_timeout)).toEqual(["0", "0", "0", "0", "0"]);
  });
});
