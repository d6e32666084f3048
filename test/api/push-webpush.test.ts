import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { unconfiguredSender } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { newAccount, pushDevice, settled, type TestAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { notify, startPeer, startServer, type TestServer } from "../helpers/server.ts";

let fake: FakeWebPush;
let server: TestServer;
const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };
const senders = () => [
  unconfiguredSender("ios", "APNs is not configured"),
  unconfiguredSender("android", "FCM is not configured"),
  createWebPushSender({ vapid, ca: fake.ca, allowPrivate: true }),
];

beforeAll(async () => {
  fake = await startFakeWebPush();
  server = await startServer({}, senders());
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

async function account(s: TestServer, email: string) {
  return newAccount(s, email);
}

async function browser(s: TestServer, acct: TestAccount) {
  const sub = fake.subscribe();
  const { deviceId, credential } = await pushDevice(s, acct, "web", {
    case: "webPush",
    value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
  });
  return { sub, deviceId, credential };
}

describe("Web Push", () => {
  it("sends VAPID-signed, encrypted pushes with TTL, Urgency and Topic", async () => {
    const acct = await account(server, "wp-ok@example.com");
    const { sub } = await browser(server, acct);
    const res = await notify(
      server,
      { title: "Deploy finished", message: "api v42 is live", priority: "high", ttl_seconds: 120 },
      { authorization: `Bearer ${acct.token}` },
    );
    const n = await settled(server, acct.token, res.json.id);
    expect(n.status).toBe("sent");
    expect(n.device_deliveries[0]).toMatchObject({ platform: "web", state: "sent", attempts: 1 });
    const got = fake.received.filter((r) => r.subscription === sub.id);
    expect(got).toHaveLength(1);
    const push = got[0];
    expect(push?.urgency).toBe("high");
    expect(push?.topic).toBe(res.json.id.replaceAll("-", ""));
    expect(Number(push?.ttl)).toBeGreaterThanOrEqual(115);
    expect(Number(push?.ttl)).toBeLessThanOrEqual(120);
    expect(push?.vapid).toMatchObject({
      aud: fake.origin,
      sub: "mailto:ops@example.com",
      k: vapid.publicKey,
    });
    expect(push?.payload).toMatchObject({
      id: res.json.id,
      title: "Deploy finished",
      message: "api v42 is live",
      truncated: false,
    });
    expect(push?.payload).not.toHaveProperty("require_ack");
  });

  it("closes an acknowledged notification on the other browsers with a clear push (same Topic)", async () => {
    const acct = await account(server, "wp-clear@example.com");
    const one = await browser(server, acct);
    const two = await browser(server, acct);
    const res = await notify(
      server,
      { title: "page", require_ack: true },
      { authorization: `Bearer ${acct.token}` },
    );
    const id = res.json.id as string;
    await settled(server, acct.token, id);
    // Browser two acknowledges (its service worker's Acknowledge button does this call).
    const ack = await fetch(`${server.url}/v1/inbox/${id}/ack`, {
      method: "POST",
      headers: { authorization: `Bearer ${two.credential}` },
      body: JSON.stringify({ acknowledge: true }),
    });
    expect(ack.status).toBe(200);
    const clearOf = (subId: string) =>
      fake.received.find((r) => r.subscription === subId && r.payload.type === "clear");
    for (let i = 0; i < 100 && !clearOf(one.sub.id); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(clearOf(one.sub.id)?.payload).toEqual({ type: "clear", id });
    expect(clearOf(one.sub.id)?.topic).toBe(id.replaceAll("-", ""));
    expect(clearOf(two.sub.id)).toBeUndefined(); // where it was acknowledged, it is already gone
  });

  it("marks a push that awaits acknowledgement, for the service worker's Acknowledge button", async () => {
    const acct = await account(server, "wp-ack@example.com");
    const { sub } = await browser(server, acct);
    const res = await notify(
      server,
      { title: "db down", require_ack: true },
      { authorization: `Bearer ${acct.token}` },
    );
    await settled(server, acct.token, res.json.id);
    const push = fake.received.find((r) => r.subscription === sub.id);
    expect(push?.payload).toMatchObject({ id: res.json.id, require_ack: true });
  });

  it("carries a question's actions, for the service worker's buttons", async () => {
    const acct = await account(server, "wp-question@example.com");
    const { sub } = await browser(server, acct);
    const actions = [
      { id: "yes", label: "Deploy", reply: false },
      { id: "no", label: "Cancel", reply: false },
    ];
    const res = await notify(
      server,
      { title: "Deploy v42?", actions },
      { authorization: `Bearer ${acct.token}` },
    );
    await settled(server, acct.token, res.json.id);
    const push = fake.received.find((r) => r.subscription === sub.id);
    expect(push?.payload).toMatchObject({ id: res.json.id, actions });
  });

  it("maps low priority to Urgency: low and sends the 24-hour lifetime without ttl", async () => {
    const acct = await account(server, "wp-low@example.com");
    const { sub } = await browser(server, acct);
    const res = await notify(
      server,
      { title: "fyi", priority: "low" },
      { authorization: `Bearer ${acct.token}` },
    );
    await settled(server, acct.token, res.json.id);
    const push = fake.received.find((r) => r.subscription === sub.id);
    expect(push?.urgency).toBe("low");
    expect(Number(push?.ttl)).toBeGreaterThan(86000);
    expect(Number(push?.ttl)).toBeLessThanOrEqual(86400);
  });

  it("keeps the preview within the limit for a maximal notification in multi-byte characters", async () => {
    const acct = await account(server, "wp-big@example.com");
    const { sub } = await browser(server, acct);
    const metadata = { k: "é".repeat(1019) };
    const res = await notify(
      server,
      { title: "😀".repeat(120), message: "漢".repeat(2048), metadata },
      { authorization: `Bearer ${acct.token}` },
    );
    expect(res.status).toBe(202);
    await settled(server, acct.token, res.json.id);
    const push = fake.received.find((r) => r.subscription === sub.id);
    expect(push?.plaintextBytes).toBeLessThanOrEqual(3993);
    expect(push?.payload).toMatchObject({ title: "😀".repeat(120), truncated: true });
    expect(String(push?.payload.message).endsWith("…")).toBe(true);
  });

  it("retries a 429 after its Retry-After, with the same Topic", async () => {
    const acct = await account(server, "wp-retry@example.com");
    const { sub } = await browser(server, acct);
    fake.script(sub.id, [{ status: 429, retryAfter: "1" }, { status: 201 }]);
    const started = Date.now();
    const res = await notify(
      server,
      { title: "eventually" },
      { authorization: `Bearer ${acct.token}` },
    );
    const n = await settled(server, acct.token, res.json.id);
    expect(n.status).toBe("sent");
    expect(n.device_deliveries[0]).toMatchObject({ state: "sent", attempts: 2 });
    const got = fake.received.filter((r) => r.subscription === sub.id);
    expect(got).toHaveLength(2);
    expect(got[0]?.topic).toBe(got[1]?.topic);
    // The VAPID token is signed once and reused (within the hour): the same expiry both times,
    // about 12 hours ahead.
    expect(got[1]?.vapid.exp).toBe(got[0]?.vapid.exp);
    expect(Number(got[0]?.vapid.exp) - Date.now() / 1000).toBeGreaterThan(11.9 * 3600);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it("disables the device when the subscription is gone (410)", async () => {
    const acct = await account(server, "wp-gone@example.com");
    const { sub, deviceId } = await browser(server, acct);
    fake.script(sub.id, [{ status: 410 }]);
    const res = await notify(
      server,
      { title: "anyone?" },
      { authorization: `Bearer ${acct.token}` },
    );
    const n = await settled(server, acct.token, res.json.id);
    expect(n.status).toBe("failed");
    expect(n.device_deliveries[0].last_error).toMatch(/gone/);
    const [row] = await sql(
      server.databaseUrl,
      "select enabled, disabled_reason from device where id = $1",
      [deviceId],
    );
    expect(row).toMatchObject({ enabled: false });
    expect(String(row?.disabled_reason)).toMatch(/410/);
  });

  it("reports a configuration error (403) without blaming the device", async () => {
    const acct = await account(server, "wp-config@example.com");
    const { sub, deviceId } = await browser(server, acct);
    fake.script(sub.id, [{ status: 403 }]);
    const res = await notify(
      server,
      { title: "misconfigured" },
      { authorization: `Bearer ${acct.token}` },
    );
    const n = await settled(server, acct.token, res.json.id);
    expect(n.status).toBe("failed");
    expect(n.device_deliveries[0].last_error).toMatch(/VAPID/);
    const [row] = await sql(server.databaseUrl, "select enabled from device where id = $1", [
      deviceId,
    ]);
    expect(row).toMatchObject({ enabled: true });
  });

  it("expires a delivery whose ttl passed before it could be sent; the push service never sees it", async () => {
    const quiet = await startServer({ workerEnabled: false }, senders());
    try {
      const acct = await account(quiet, "wp-ttl@example.com");
      const { sub } = await browser(quiet, acct);
      const res = await notify(
        quiet,
        { title: "too late", ttl_seconds: 30 },
        { authorization: `Bearer ${acct.token}` },
      );
      await sql(
        quiet.databaseUrl,
        "update notification set expires_at = now() - interval '1 second' where id = $1",
        [res.json.id],
      );
      const worker = await startPeer(quiet, {}, senders());
      try {
        const n = await settled(quiet, acct.token, res.json.id);
        expect(n.status).toBe("expired");
        expect(n.device_deliveries[0]).toMatchObject({ state: "expired", attempts: 1 });
        expect(fake.received.filter((r) => r.subscription === sub.id)).toHaveLength(0);
      } finally {
        await worker.close();
      }
    } finally {
      await quiet.close();
    }
  });
  it("holds up nothing else while a push service does not answer", async () => {
    const acct = await account(server, "wp-slow@example.com");
    const { sub } = await browser(server, acct);
    fake.hold(6000);
    try {
      const auth = { authorization: `Bearer ${acct.token}` };
      const first = await notify(server, { title: "first, unanswered" }, auth);
      const pushed = (id: string) =>
        fake.received.some((r) => r.subscription === sub.id && r.payload.id === id);
      for (let i = 0; i < 150 && !pushed(first.json.id); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(pushed(first.json.id)).toBe(true);
      // The first push is still waiting for its answer; the next notification goes out anyway.
      const second = await notify(server, { title: "second" }, auth);
      for (let i = 0; i < 150 && !pushed(second.json.id); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(pushed(second.json.id)).toBe(true);
      const n = await body(
        await fetch(`${server.url}/v1/notifications/${first.json.id}`, { headers: auth }),
      );
      expect(n.device_deliveries[0]).toMatchObject({ state: "pending" });
    } finally {
      fake.hold(0);
    }
  });

  it("counts a push unanswered for half the lease as a failed attempt, and retries it", async () => {
    const short = await startServer({ deliveryLeaseSeconds: 2 }, senders());
    try {
      const acct = await account(short, "wp-timeout@example.com");
      const { sub } = await browser(short, acct);
      fake.hold(1500); // longer than the 1 s send timeout of a 2 s lease
      const res = await notify(
        short,
        { title: "slow answer" },
        { authorization: `Bearer ${acct.token}` },
      );
      for (let i = 0; i < 100 && fake.received.every((r) => r.subscription !== sub.id); i++)
        await new Promise((r) => setTimeout(r, 20));
      fake.hold(0);
      const n = await settled(short, acct.token, res.json.id);
      expect(n.status).toBe("sent");
      expect(n.device_deliveries[0]?.attempts).toBeGreaterThanOrEqual(2);
      const got = fake.received.filter((r) => r.subscription === sub.id);
      expect(got.length).toBeGreaterThanOrEqual(2);
      expect(new Set(got.map((r) => r.topic)).size).toBe(1);
    } finally {
      fake.hold(0);
      await short.close();
    }
  });
});
