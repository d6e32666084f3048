/**
 * Issue 13's crash test: a server killed with SIGKILL while webhooks are in flight and a
 * scheduled notification is due soon. After another server takes over, every webhook event is
 * answered once (re-sent with the same webhook-id after the lease), and the scheduled
 * notification is released once, not before its time.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/orm.ts";
import { unconfiguredSender } from "../../src/delivery/senders/sender.ts";
import { freshDatabase, sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { testTokenKeys } from "../helpers/server.ts";
import { tempDir } from "../helpers/temp.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver } from "../helpers/webhook-receiver.ts";

let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  hooks = await startWebhookReceiver();
});
afterAll(async () => hooks.close());

const tokenKeyEnv = {
  HERALD_TOKEN_KEYS: testTokenKeys.keys.map((k) => `${k.id}:${k.key.toString("base64")}`).join(","),
  HERALD_TOKEN_INDEX_KEY: Buffer.alloc(32, 9).toString("base64"),
};

describe("a server killed while webhooks and a schedule are due", () => {
  it("after another takes over, each event is answered once and the schedule fires once", async () => {
    const databaseUrl = await freshDatabase();
    const password = "crash test password";
    const herald = await spawnHerald({
      DATABASE_URL: databaseUrl,
      HERALD_BOOTSTRAP: "1",
      HERALD_PROCESSES: "1",
      HERALD_OWNER_EMAIL: "events@example.com",
      HERALD_OWNER_PASSWORD: password,
      HERALD_DATA_DIR: tempDir("herald-events-"),
      HERALD_DELIVERY_LEASE_SECONDS: "2",
      HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
      // All four events in flight at once to the one endpoint, each cut at 2 s (its lease, 4 s,
      // outlives the send: a webhook lease is at least the deadline and 2 s).
      HERALD_WEBHOOK_IN_FLIGHT_PER_ENDPOINT: "4",
      HERALD_WEBHOOK_DEADLINE_MS: "2000",
      ...tokenKeyEnv,
    });
    const apiKey = await waitForKey(herald);
    const auth = { authorization: `Bearer ${apiKey}` };
    const registered = await body(
      await fetch(`${herald.url}/v1/webhooks`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ url: hooks.url, event_types: ["notification.created"] }),
      }),
    );
    hooks.trust(registered.secret);
    // A stream device, so that the scheduled notification has somewhere to go.
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: herald.url, httpVersion: "1.1" }),
    );
    await devices.signInDevice({
      method: { case: "password", value: { email: "events@example.com", password } },
      name: "terminal",
      platform: "stream",
    });
    hooks.hold(true); // the receiver reads every request and answers none
    const publish = async (b: object) =>
      body(
        await fetch(`${herald.url}/v1/notify`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify(b),
        }),
      );
    const now = await Promise.all([0, 1, 2].map((i) => publish({ title: `now ${i}` })));
    const later = await publish({ title: "later", delay_seconds: 3 });
    const events = new Set<string>();
    await waitFor(() => {
      for (const r of hooks.received) events.add(r.id);
      return events.size === 4; // four notification.created events in flight, unanswered
    });
    herald.child.kill("SIGKILL");
    await herald.exited;
    expect(hooks.received.every((r) => r.answered === undefined)).toBe(true);
    const [scheduled] = await sql<{ status: string }>(
      databaseUrl,
      "select status from notification where id = $1",
      [later.id],
    );
    expect(scheduled?.status).toBe("scheduled");

    hooks.hold(false);
    const config = {
      ...loadConfig({}),
      databaseUrl,
      port: 0,
      deliveryLeaseSeconds: 2,
      webhookAllowPrivate: true,
      limits: { ...loadConfig({}).limits, webhookDeadlineMs: 2000 },
    };
    const orm = await openDatabase({ url: databaseUrl, poolSize: 5 });
    const app = await buildApp({
      config,
      orm,
      tokenKeys: testTokenKeys,
      senders: (["ios", "android", "web"] as const).map((p) => unconfiguredSender(p, "off")),
      logger: false,
    });
    await app.ready();
    try {
      await waitFor(async () => {
        const rows = await sql<{ n: number }>(
          databaseUrl,
          "select count(*)::int as n from webhook_delivery where state = 'succeeded'",
        );
        return rows[0]?.n === 4;
      }, 15_000);
      // Every event answered exactly once, each under its one webhook-id, all signed.
      const answered = hooks.received.filter((r) => r.answered === 200);
      expect(answered.map((r) => r.id).sort()).toEqual([...events].sort());
      expect(hooks.received.every((r) => r.verifiedBy.length === 1)).toBe(true);
      expect(new Set(answered.map((r) => r.payload.data.id))).toEqual(
        new Set([...now.map((n) => n.id), later.id]),
      );

      // The scheduled one: released once, at or after its time.
      await waitFor(async () => {
        const [n] = await sql<{ status: string }>(
          databaseUrl,
          "select status from notification where id = $1",
          [later.id],
        );
        return n?.status !== "scheduled" && n?.status !== "queued";
      }, 10_000);
      const rows = await sql<{ created: Date; deliver_at: Date }>(
        databaseUrl,
        `select d.next_attempt_at as created, n.deliver_at from delivery d
           join notification n on n.id = d.notification_id where n.id = $1`,
        [later.id],
      );
      expect(rows).toHaveLength(1);
      expect(new Date(rows[0]?.created as Date).getTime()).toBeGreaterThanOrEqual(
        new Date(rows[0]?.deliver_at as Date).getTime(),
      );
    } finally {
      await app.close();
      await orm.close();
    }
  }, 40_000);
});
