/**
 * A worker killed with SIGKILL in the middle of a batch: every delivery still completes, each
 * push arriving once, or again with the same collapse id (Web Push `Topic`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/orm.ts";
import { unconfiguredSender } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { freshDatabase, sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { testTokenKeys } from "../helpers/server.ts";
import { subscribeBrowsers, webPushHeraldEnv } from "../helpers/web-push-herald.ts";

let fake: FakeWebPush;
beforeAll(async () => {
  fake = await startFakeWebPush();
});
afterAll(async () => fake.close());

const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };

describe("a worker killed mid-batch", () => {
  it("leaves nothing undelivered: another worker finishes after the lease, same collapse ids", async () => {
    const databaseUrl = await freshDatabase();
    const owner = { email: "crash@example.com", password: "crash test password" };
    fake.hold(5000); // the push service is slow: the batch is in flight when the worker dies
    const herald = await spawnHerald({
      DATABASE_URL: databaseUrl,
      ...(await webPushHeraldEnv(owner.email, owner.password)),
      HERALD_DELIVERY_LEASE_SECONDS: "2",
    });
    const apiKey = await waitForKey(herald);
    const subs = await subscribeBrowsers(herald.url, owner, fake, 4);
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
        createWebPushSender({ vapid, ca: fake.ca, allowPrivate: true }),
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
