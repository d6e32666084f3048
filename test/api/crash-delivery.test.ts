/**
 * A worker killed with SIGKILL in the middle of a batch: every delivery still completes, each
 * push arriving once, or again with the same collapse id (Web Push `Topic`).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/orm.ts";
import { unconfiguredSender } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { testCertificate } from "../fakes/tls.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { freshDatabase, sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { testTokenKeys } from "../helpers/server.ts";

let fake: FakeWebPush;
beforeAll(async () => {
  fake = await startFakeWebPush();
});
afterAll(async () => fake.close());

const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };
const tokenKeyEnv = {
  HERALD_TOKEN_KEYS: testTokenKeys.keys.map((k) => `${k.id}:${k.key.toString("base64")}`).join(","),
  HERALD_TOKEN_INDEX_KEY: Buffer.alloc(32, 9).toString("base64"),
};

describe("a worker killed mid-batch", () => {
  it("leaves nothing undelivered: another worker finishes after the lease, same collapse ids", async () => {
    const databaseUrl = await freshDatabase();
    const dir = mkdtempSync(join(tmpdir(), "herald-crash-"));
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, (await testCertificate()).cert);
    const password = "crash test password";
    fake.hold(5000); // the push service is slow: the batch is in flight when the worker dies
    const herald = await spawnHerald({
      DATABASE_URL: databaseUrl,
      HERALD_BOOTSTRAP: "1",
      HERALD_OWNER_EMAIL: "crash@example.com",
      HERALD_OWNER_PASSWORD: password,
      HERALD_DATA_DIR: dir,
      HERALD_VAPID_PUBLIC_KEY: vapid.publicKey,
      HERALD_VAPID_PRIVATE_KEY: vapid.privateKey,
      HERALD_DELIVERY_LEASE_SECONDS: "2",
      // The fake push service listens on 127.0.0.1.
      HERALD_WEB_PUSH_HOSTS: "127.0.0.1",
      HERALD_WEB_PUSH_ALLOW_PRIVATE: "1",
      NODE_EXTRA_CA_CERTS: caFile,
      ...tokenKeyEnv,
    });
    const apiKey = await waitForKey(herald);
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: herald.url, httpVersion: "1.1" }),
    );
    const subs = [];
    for (let i = 0; i < 4; i++) {
      const { deviceCredential } = await devices.signInDevice({
        method: { case: "password", value: { email: "crash@example.com", password } },
        name: `browser ${i}`,
        platform: "web",
      });
      const sub = fake.subscribe();
      subs.push(sub);
      await devices.registerChannel(
        {
          channel: {
            case: "webPush",
            value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
          },
        },
        { headers: { authorization: `Bearer ${deviceCredential}` } },
      );
    }
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${herald.url}/v1/notify`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ title: `crash ${i}` }),
      });
      ids.push((await body(res)).id);
    }
    // Wait until the worker has a push in flight (the fake holds every reply), then kill it.
    // How many of the 12 are in flight by then depends on how the rounds fell; any will do.
    for (let i = 0; i < 400 && fake.received.length === 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(fake.received.length).toBeGreaterThan(0);
    herald.child.kill("SIGKILL");
    await herald.exited;
    const inFlight = await sql<{ n: number }>(
      databaseUrl,
      "select count(*)::int as n from delivery where state = 'pending'",
    );
    expect(inFlight[0]?.n).toBeGreaterThan(0);

    // Another process's worker takes over once the leases run out.
    fake.hold(0);
    const config = { ...loadConfig({}), databaseUrl, port: 0, deliveryLeaseSeconds: 2 };
    const orm = await openDatabase({ url: databaseUrl, poolSize: 5 });
    const app = await buildApp({
      config,
      orm,
      tokenKeys: testTokenKeys,
      senders: [
        unconfiguredSender("ios", "APNs is not configured"),
        unconfiguredSender("android", "FCM is not configured"),
        createWebPushSender({ vapid, dispatcher: fake.dispatcher }),
      ],
      logger: false,
    });
    await app.ready();
    try {
      let states: { state: string; n: number }[] = [];
      for (let i = 0; i < 300; i++) {
        states = await sql(
          databaseUrl,
          "select state, count(*)::int as n from delivery group by state",
        );
        if (states.length === 1 && states[0]?.state === "sent") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(states).toEqual([{ state: "sent", n: 12 }]);
      for (const sub of subs) {
        for (const id of ids) {
          const pushes = fake.received.filter(
            (r) => r.subscription === sub.id && r.payload.id === id,
          );
          expect(pushes.length).toBeGreaterThanOrEqual(1);
          expect(new Set(pushes.map((p) => p.topic))).toEqual(new Set([id.replaceAll("-", "")]));
        }
      }
    } finally {
      await app.close();
      await orm.close();
    }
  }, 60_000);
});
