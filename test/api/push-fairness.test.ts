/**
 * Noisy neighbours, push (issue 21, point 1): one account whose Web Push endpoints answer slowly
 * holds only its share of the worker's sends; another account's push goes out at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { newAccount, pushDevice } from "../helpers/accounts.ts";
import {
  apnsTestSenders,
  notify,
  startServer,
  type TestServer,
  testLimits,
} from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };
const perAccount = 4;
let apns: FakeApns;
let slow: FakeWebPush;
let server: TestServer;
beforeAll(async () => {
  apns = await startFakeApns();
  slow = await startFakeWebPush();
  const senders = apnsTestSenders(apns).filter((s) => s.platform !== "web");
  senders.push(createWebPushSender({ vapid, ca: slow.ca, allowPrivate: true }));
  server = await startServer(
    { deliveryConcurrency: 10, limits: { ...testLimits, pushInFlightPerAccount: perAccount } },
    senders,
  );
});
afterAll(async () => {
  await server.close();
  await apns.close();
  await slow.close();
});

describe("an account whose push endpoints answer slowly", () => {
  it("holds at most its share of the worker's sends; another account's push is not held up", async () => {
    const noisy = await newAccount(server, "noisy@example.com");
    for (let i = 0; i < 3; i++) {
      const sub = slow.subscribe();
      await pushDevice(server, noisy, "web", {
        case: "webPush",
        value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
      });
    }
    const quiet = await newAccount(server, "quiet@example.com");
    const token = "ab".repeat(32);
    await pushDevice(server, quiet, "ios", { case: "pushToken", value: token });

    // 5 notifications to 3 slow browsers: 15 sends due, more than the worker's 10 slots.
    slow.hold(4_000);
    for (let i = 0; i < 5; i++) {
      const r = await notify(
        server,
        { title: `noisy ${i}` },
        { authorization: `Bearer ${noisy.token}` },
      );
      expect(r.status).toBe(202);
    }
    await waitFor(() => slow.received.length >= perAccount);
    const published = Date.now();
    const r = await notify(
      server,
      { title: "quiet neighbour" },
      { authorization: `Bearer ${quiet.token}` },
    );
    expect(r.status).toBe(202);
    await waitFor(() => apns.received.some((p) => p.token === token), 3_000);
    expect(apns.received.filter((p) => p.token === token)).toHaveLength(1);
    expect(Date.now() - published).toBeLessThan(1_500);
    // The slow account never had more than its share in flight.
    expect(slow.received.length).toBeLessThanOrEqual(perAccount);
    slow.hold(0);
    await waitFor(() => slow.received.length >= 15, 20_000);
    expect(slow.received.length).toBeGreaterThanOrEqual(15);
  }, 40_000);
});
