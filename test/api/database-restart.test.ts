/**
 * While PostgreSQL restarts, calls that need it are answered `unavailable` (503 with
 * Retry-After; gRPC UNAVAILABLE), which clients retry, never `internal`; nothing is lost, and
 * the server serves again as soon as the database is back. The background workers say the
 * outage once each, and when it ends, instead of a failed round with its stack several times a
 * second.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { sql } from "../helpers/db.ts";
import { capturedLog, notify, startServer, type TestServer } from "../helpers/server.ts";
import { startDatabaseProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let proxy: TcpProxy;
let server: TestServer;
const log = capturedLog("info");
const logLines = () => log.entries().map((e) => e.msg);
beforeAll(async () => {
  const db = await startDatabaseProxy(inject("pgServerUrl"));
  proxy = db;
  server = await startServer({ credentialCacheMs: 0 }, undefined, db.through, log.logger);
});
afterAll(async () => {
  await proxy.up().catch(() => {});
  await server.close();
  await proxy.close();
});

describe("a database restart", () => {
  it("answers 503 unavailable with Retry-After over REST and UNAVAILABLE over gRPC, then recovers", async () => {
    expect(
      (await notify(server, { title: "before" }, { "idempotency-key": "k-before" })).status,
    ).toBe(202);
    await proxy.down();

    const rest = await notify(server, { title: "during" }, { "idempotency-key": "k-during" });
    expect(rest.status).toBe(503);
    expect(rest.headers.get("retry-after")).toBe("1");
    expect(rest.json).toMatchObject({ code: "unavailable", status: 503 });
    expect(rest.json.detail).toMatch(/database is unavailable/);

    const grpc = createClient(NotifyService, createGrpcTransport({ baseUrl: server.url }));
    const err = await grpc
      .notify({ title: "during" }, { headers: { authorization: `Bearer ${server.apiKey}` } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);

    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    // Both workers have failed rounds meanwhile (they poll every 250 and 200 ms): said once.
    const said = (what: string) => logLines().filter((m) => m === what).length;
    const down = (w: string) => `${w}: the database is unavailable; waiting for it`;
    const loops = ["the delivery worker", "the webhook worker", "the stream hub"];
    await waitFor(() => loops.every((w) => said(down(w)) > 0));
    // The outage lasts 1.5 s more: several rounds of each worker fail, and the stream hub's
    // first reconnect (1 s after it lost its connection); none of them is logged.
    await new Promise((r) => setTimeout(r, 1_500));

    await proxy.up();
    // The retry with the same key lands once, as a client's retry would.
    let again = await notify(server, { title: "during" }, { "idempotency-key": "k-during" });
    for (let i = 0; i < 50 && again.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await notify(server, { title: "during" }, { "idempotency-key": "k-during" });
    }
    expect(again.status).toBe(202);
    const rows = await sql(server.databaseUrl, "select title from notification order by id");
    expect(rows.map((r) => r.title)).toEqual(["before", "during"]);
    // The stream hub tries again 2 s after its failed reconnect.
    await waitFor(() => loops.every((w) => said(`${w}: the database is back`) === 1), 10_000);
    for (const w of loops) {
      expect(said(down(w))).toBe(1);
      const back = log.entries().find((e) => e.msg === `${w}: the database is back`);
      expect(back?.failed_rounds).toBeGreaterThanOrEqual(2);
    }
    const failed = /tick failed|round failed|job failed|reconnect failed|connection lost/;
    expect(logLines().filter((m) => failed.test(m))).toEqual([]);
  });

  it("answers 503 while the database refuses writes (a standby in a failover; a full disk), then recovers", async () => {
    // Every new session read-only, as on a standby; the server's sessions end, so its pool
    // reconnects to one. (A full disk's 53100 is of the same kind; by hand, it answered 500.)
    const name = new URL(server.databaseUrl).pathname.slice(1);
    const sessions = `select pg_terminate_backend(pid) from pg_stat_activity
                        where datname = '${name}' and pid <> pg_backend_pid()`;
    await sql(
      server.databaseUrl,
      `alter database "${name}" set default_transaction_read_only = on`,
    );
    await sql(server.databaseUrl, sessions);
    const refusedWrite = () =>
      log.entries().some((e) => String(e.reason).includes("read-only transaction"));
    let res = await notify(server, { title: "read-only" });
    for (let i = 0; i < 50 && !refusedWrite(); i++)
      res = await notify(server, { title: "read-only" });
    expect(refusedWrite()).toBe(true);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.json).toMatchObject({ code: "unavailable" });
    // Said with its reason, not its stack, and never as an internal error.
    expect(log.entries().filter((e) => e.msg === "rpc failed")).toEqual([]);
    expect(log.entries().filter((e) => e.msg === "database unavailable" && e.err)).toEqual([]);

    // From another database: this one's sessions can no longer alter anything.
    const admin = new URL(server.databaseUrl);
    admin.pathname = "/postgres";
    await sql(admin.toString(), `alter database "${name}" reset default_transaction_read_only`);
    await sql(admin.toString(), sessions);
    let again = await notify(server, { title: "writable" });
    for (let i = 0; i < 50 && again.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await notify(server, { title: "writable" });
    }
    expect(again.status).toBe(202);
  });
});
