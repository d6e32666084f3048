/**
 * Health for a load balancer: /healthz while the process serves; /readyz only while the
 * database answers with every migration applied and the process is not draining.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

const get = async (path: string) => {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

describe("health", () => {
  it("/healthz and /readyz answer without a credential", async () => {
    expect(await get("/healthz")).toEqual({ status: 200, json: { status: "ok" } });
    expect(await get("/readyz")).toEqual({ status: 200, json: { status: "ready" } });
  });
  it("/readyz is 503 with the reason when a migration is missing", async () => {
    const [last] = await sql<{ name: string }>(
      server.databaseUrl,
      "delete from herald_migrations where id = (select max(id) from herald_migrations) returning name",
    );
    try {
      const res = await get("/readyz");
      expect(res.status).toBe(503);
      expect(res.json.reason).toMatch(/^migrations pending: \d+ of \d+ applied$/);
    } finally {
      await sql(
        server.databaseUrl,
        "insert into herald_migrations (name, executed_at) values ($1, now())",
        [last?.name],
      );
    }
    expect((await get("/readyz")).status).toBe(200);
  });
  it("/readyz is 503 when the database does not answer", async () => {
    const other = await startServer();
    // The database goes away under the server (its connections cut, then the database itself).
    const name = new URL(other.databaseUrl).pathname.slice(1);
    await sql(
      other.databaseUrl.replace(/\/[^/]+$/, "/postgres"),
      `drop database "${name}" with (force)`,
    );
    const res = await fetch(`${other.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: "not_ready",
      reason: "the database does not answer",
    });
    expect((await fetch(`${other.url}/healthz`)).status).toBe(200);
    await other.close().catch(() => {});
  });
});
