/**
 * GET /metrics: Prometheus text with publishes by protocol and outcome, the publish latency
 * histogram, push outcomes by platform, the delivery queue's depth and age, live streams, the
 * database pool and process metrics; on its own port with HERALD_METRICS_PORT.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { packageRoot } from "../../src/package-root.ts";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";
import { newAccount, pushDevice, settled } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import {
  apnsTestSenders,
  notify,
  ownerPassword,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let apns: FakeApns;
let server: TestServer;
beforeAll(async () => {
  apns = await startFakeApns();
  server = await startServer({}, apnsTestSenders(apns));
});
afterAll(async () => {
  await server.close();
  await apns.close();
});

/** The value of one sample line (`name{labels} value`), or undefined. */
async function sample(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  it("is Prometheus text, unauthenticated, with process and pool metrics", async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      'herald_db_pool_connections{state="in_use"}',
      "herald_db_pool_waiting",
      "herald_streams_connected",
    ]) {
      expect(text).toContain(`\n${name}`);
    }
    expect(text).not.toMatch(/hk_|hc_|Bearer/);
    // Which process answered, and which build it runs (package.json's version).
    const { version } = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8"));
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    const info = `herald_process_info{pid="${process.pid}",version="${version}"}`;
    expect(await sample(`${server.url}/metrics`, info)).toBe(1);
  });

  it("counts publishes by protocol and outcome, with their latency", async () => {
    const url = `${server.url}/metrics`;
    expect((await notify(server, { title: "over rest" })).status).toBe(202);
    expect((await notify(server, { title: "" })).status).toBe(400);
    const headers = { authorization: `Bearer ${server.apiKey}` };
    await createClient(NotifyService, createGrpcTransport({ baseUrl: server.url })).notify(
      { title: "over grpc" },
      { headers },
    );
    await createClient(
      NotifyService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    ).notify({ title: "over connect" }, { headers });
    expect(await sample(url, 'herald_publishes_total{protocol="rest",code="ok"}')).toBe(1);
    expect(
      await sample(url, 'herald_publishes_total{protocol="rest",code="invalid_argument"}'),
    ).toBe(1);
    expect(await sample(url, 'herald_publishes_total{protocol="grpc",code="ok"}')).toBe(1);
    expect(await sample(url, 'herald_publishes_total{protocol="connect",code="ok"}')).toBe(1);
    expect(await sample(url, 'herald_publish_duration_seconds_count{protocol="rest"}')).toBe(2);
    expect(
      await sample(
        url,
        'herald_rpcs_total{rpc="herald.v1.NotifyService/Notify",protocol="grpc",code="ok"}',
      ),
    ).toBe(1);
  });

  it("counts push outcomes by platform", async () => {
    const account = await newAccount(server, "metrics-phone@example.com");
    await pushDevice(server, account, "ios", { case: "pushToken", value: "ab".repeat(32) });
    const res = await notify(
      server,
      { title: "to a phone" },
      {
        authorization: `Bearer ${account.token}`,
      },
    );
    await settled(server, account.token, res.json.id);
    expect(
      await sample(
        `${server.url}/metrics`,
        'herald_deliveries_total{platform="ios",outcome="sent"}',
      ),
    ).toBe(1);
    // The claim that leased it was timed, and its outcome was recorded by one statement.
    expect(
      await sample(`${server.url}/metrics`, "herald_delivery_claim_duration_seconds_count"),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await sample(`${server.url}/metrics`, "herald_delivery_settle_batch_size_count"),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await sample(`${server.url}/metrics`, "herald_delivery_settle_batch_size_sum"),
    ).toBeGreaterThanOrEqual(1);
    // The send was timed until the push service answered, under its platform.
    const send = 'herald_push_send_duration_seconds_count{platform="ios"}';
    expect(await sample(`${server.url}/metrics`, send)).toBe(1);
    expect(
      await sample(
        `${server.url}/metrics`,
        'herald_push_send_duration_seconds_sum{platform="ios"}',
      ),
    ).toBeGreaterThan(0);
  });

  it("shows deliveries backing up: queue depth and the oldest due one's age", async () => {
    const url = `${server.url}/metrics`;
    expect(await sample(url, "herald_delivery_queue_depth")).toBe(0);
    // A delivery that has been due for a minute, leased to no one (as if every worker were down).
    const [device] = await sql<{ id: string }>(server.databaseUrl, "select id from device limit 1");
    const res = await notify(server, { title: "stuck" });
    await sql(
      server.databaseUrl,
      `insert into delivery (notification_id, device_id, platform, next_attempt_at, locked_until)
       values ($1, $2, 'ios', now() - interval '60 seconds', now() + interval '1 hour')`,
      [res.json.id, device?.id],
    );
    // The scrape caches the queue's figures for a second.
    await waitFor(async () => (await sample(url, "herald_delivery_queue_depth")) === 1, 2_000);
    expect(await sample(url, "herald_delivery_queue_depth")).toBe(1);
    expect(await sample(url, "herald_delivery_queue_due")).toBe(1);
    expect(await sample(url, "herald_delivery_oldest_due_age_seconds")).toBeGreaterThanOrEqual(60);
  });

  it("counts live streams", async () => {
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const { deviceCredential } = await devices.signInDevice({
      method: { case: "password", value: { email: "owner@example.com", password: ownerPassword } },
      name: "terminal",
      platform: "stream",
    });
    const abort = new AbortController();
    const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: server.url }));
    const stream = (async () => {
      try {
        for await (const _ of inbox.subscribe(
          {},
          { headers: { authorization: `Bearer ${deviceCredential}` }, signal: abort.signal },
        ));
      } catch {
        // aborted
      }
    })();
    const url = `${server.url}/metrics`;
    await waitFor(async () => (await sample(url, "herald_streams_connected")) === 1);
    expect(await sample(url, "herald_streams_connected")).toBe(1);
    abort.abort();
    await stream;
    await waitFor(async () => (await sample(url, "herald_streams_connected")) === 0);
    expect(await sample(url, "herald_streams_connected")).toBe(0);
  });
});

describe("HERALD_METRICS_PORT", () => {
  it("serves /metrics on its own port, and not on the API's", async () => {
    const other = await startServer({ metricsPort: 0 });
    const port = (other.app as unknown as { metricsPort(): number }).metricsPort();
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(other.port);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("herald_publishes_total");
    expect((await fetch(`${other.url}/metrics`)).status).toBe(404);
    await other.close();
  });
});
