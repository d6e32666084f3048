/**
 * Web Push's connections (senders/push-services.ts): HTTP/2 to a push service that offers it in
 * ALPN, many pushes as streams of a few connections; HTTP/1.1 to one that does not; and, either
 * way, no connection to a private address unless private addresses are allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { PushServices } from "../../src/delivery/senders/push-services.ts";
import type { PushMessage } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { waitFor } from "../helpers/wait.ts";

const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };
let h2: FakeWebPush;
let h1: FakeWebPush;
beforeAll(async () => {
  [h2, h1] = await Promise.all([startFakeWebPush(), startFakeWebPush({ http1Only: true })]);
});
afterAll(async () => {
  await Promise.all([h2.close(), h1.close()]);
});

const message = (i: number): PushMessage => ({
  notificationId: `0190a0b0-0000-7000-8000-${String(i).padStart(12, "0")}`,
  topic: "deploys",
  title: "Deploy finished",
  message: `api v${i} is live`,
  priority: "default",
  click_url: null,
  replace_key: null,
  expiresAt: new Date(Date.now() + 60_000),
  hasTtl: false,
});

/** A browser of the fake, as its subscription token; `host` in place of 127.0.0.1. */
function browser(fake: FakeWebPush, host = "127.0.0.1") {
  const s = fake.subscribe();
  const endpoint = s.endpoint.replace("127.0.0.1", host);
  return {
    id: s.id,
    token: JSON.stringify({ endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }),
  };
}

describe("Web Push connections", () => {
  it("sends over HTTP/2 where the push service offers it, on a few connections", async () => {
    const sender = createWebPushSender({ vapid, ca: h2.ca, allowPrivate: true });
    try {
      const browsers = Array.from({ length: 60 }, () => browser(h2));
      const results = await Promise.all(browsers.map((b, i) => sender.send(message(i), b.token)));
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      const got = h2.received.filter((r) => browsers.some((b) => b.id === r.subscription));
      expect(got).toHaveLength(60);
      expect(new Set(got.map((r) => r.httpVersion))).toEqual(new Set(["2.0"]));
      expect(got[5]?.payload).toMatchObject({
        title: "Deploy finished",
        message: "api v5 is live",
      });
      // HTTP/1.1 would have opened a connection per push in flight.
      expect(h2.sessionsOpened()).toBeGreaterThanOrEqual(1);
      expect(h2.sessionsOpened()).toBeLessThanOrEqual(4);
    } finally {
      await sender.close();
    }
  });

  it("sends over HTTP/1.1 to a push service without HTTP/2", async () => {
    const sender = createWebPushSender({ vapid, ca: h1.ca, allowPrivate: true });
    try {
      const browsers = Array.from({ length: 10 }, () => browser(h1));
      const results = await Promise.all(browsers.map((b, i) => sender.send(message(i), b.token)));
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      const got = h1.received.filter((r) => browsers.some((b) => b.id === r.subscription));
      expect(got).toHaveLength(10);
      expect(new Set(got.map((r) => r.httpVersion))).toEqual(new Set(["1.1"]));
      expect(got[3]?.payload).toMatchObject({ message: "api v3 is live" });
    } finally {
      await sender.close();
    }
  });

  it("asks again when a push service comes back without HTTP/2", async () => {
    const first = await startFakeWebPush();
    const port = Number(new URL(first.origin).port);
    const sender = createWebPushSender({ vapid, ca: first.ca, allowPrivate: true });
    try {
      expect(await sender.send(message(1), browser(first).token)).toEqual({ kind: "ok" });
      expect(first.received.at(-1)?.httpVersion).toBe("2.0");
      const stale = browser(first);
      await first.close();
      expect(await sender.send(message(2), stale.token)).toEqual({
        kind: "retry",
        reason: "web push: the push service could not be reached",
      });
      const again = await startFakeWebPush({ http1Only: true, port });
      try {
        expect(await sender.send(message(3), browser(again).token)).toEqual({ kind: "ok" });
        expect(again.received.at(-1)?.httpVersion).toBe("1.1");
      } finally {
        await again.close();
      }
    } finally {
      await sender.close();
    }
  });

  it("connects to no private address unless allowed, over either protocol", async () => {
    for (const fake of [h2, h1]) {
      const refusing = createWebPushSender({ vapid, ca: fake.ca });
      const allowing = createWebPushSender({ vapid, ca: fake.ca, allowPrivate: true });
      try {
        const b = browser(fake, "localhost");
        expect(await refusing.send(message(1), b.token)).toEqual({
          kind: "retry",
          reason: "web push: the push service could not be reached",
        });
        expect(fake.received.some((r) => r.subscription === b.id)).toBe(false);
        expect(await allowing.send(message(2), b.token)).toEqual({ kind: "ok" });
        expect(fake.received.filter((r) => r.subscription === b.id)).toHaveLength(1);
      } finally {
        await Promise.all([refusing.close(), allowing.close()]);
      }
    }
  });

  it("ends its connections when closed, even while a service is being asked, and opens none after", async () => {
    const fake = await startFakeWebPush();
    try {
      const services = new PushServices({ ca: fake.ca, timeoutMs: 5_000 });
      const url = new URL(fake.subscribe().endpoint);
      // The handshake that asks the service is under way when the sender closes.
      const sending = services
        .post(url, { headers: { ttl: "60" }, body: Buffer.alloc(0) })
        .catch((e: unknown) => e);
      await services.close();
      expect(await sending).toBeInstanceOf(Error);
      await expect(services.post(url, { headers: {}, body: Buffer.alloc(0) })).rejects.toThrow(
        /closed/,
      );
      await waitFor(() => fake.openConnections() === 0, 5_000);
      expect(fake.openConnections()).toBe(0);
    } finally {
      await fake.close();
    }
  });
});
