/**
 * A fan-out to more of one account's devices than its share of the worker's sends is sent in
 * one go: the worker claims again as soon as a claim found work (an account's share, not the
 * batch, may have cut it), and an account at its share is claimed for again once half of its
 * sends are back, without waiting for an idle poll. Here the idle poll and the retry look are a
 * minute long, so a worker that waited for either would not finish within the test's time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { workerClock } from "../../src/config.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { newAccount, pushDevice } from "../helpers/accounts.ts";
import { notify, startServer, type TestServer, testLimits } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };
const perAccount = 4;
const devices = 13;
let browsers: FakeWebPush;
let server: TestServer;

beforeAll(async () => {
  browsers = await startFakeWebPush();
  server = await startServer(
    {
      deliveryConcurrency: 50,
      limits: { ...testLimits, pushInFlightPerAccount: perAccount },
      workerClock: { ...workerClock, idlePoll: 60_000, claimRetries: 60_000 },
    },
    [createWebPushSender({ vapid, ca: browsers.ca, allowPrivate: true })],
  );
});
afterAll(async () => {
  await server.close();
  await browsers.close();
});

describe("a fan-out to more devices than the account's share of sends", () => {
  it("is sent in one go: claimed again while there is work, and again when half the share is back", async () => {
    const owner = await newAccount(server, "many-browsers@example.com");
    for (let i = 0; i < devices; i++) {
      const sub = browsers.subscribe();
      await pushDevice(server, owner, "web", {
        case: "webPush",
        value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
      });
    }
    // Each push is answered after 100 ms: the account reaches its share while sends are out.
    browsers.hold(100);
    const r = await notify(
      server,
      { title: "to every browser" },
      { authorization: `Bearer ${owner.token}` },
    );
    expect(r.status).toBe(202);
    await waitFor(() => browsers.received.length >= devices, 20_000);
    expect(browsers.received).toHaveLength(devices);
  }, 40_000);
});
