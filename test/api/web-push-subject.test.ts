/**
 * Web Push's VAPID subject against a push service that holds it to Apple's rule: the default
 * Herald signed every push with, `mailto:owner@localhost`, is refused by Apple's push service
 * (403 BadJwtToken: no push ever reached Safari or an iPhone web app). Herald now signs with its
 * public URL when that is an https:// name, and a refusal of a subject nobody can reach says
 * what to set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { loadConfig } from "../../src/config.ts";
import type { PushMessage } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";

let apple: FakeWebPush;
beforeAll(async () => {
  apple = await startFakeWebPush({ appleSubjects: true });
});
afterAll(() => apple.close());

const message: PushMessage = {
  notificationId: "0190a0b0-0000-7000-8000-000000000001",
  topic: "deploys",
  title: "Deploy finished",
  message: "api is live",
  priority: "default",
  click_url: null,
  replace_key: null,
  expiresAt: new Date(Date.now() + 60_000),
  hasTtl: false,
};

/** A push to a new browser of the fake, signed with the subject the settings `env` give. */
async function pushWith(env: Record<string, string>) {
  const subject = loadConfig(env).vapidSubject;
  const sender = createWebPushSender({
    vapid: { ...webpush.generateVAPIDKeys(), subject },
    ca: apple.ca,
    allowPrivate: true,
  });
  const s = apple.subscribe();
  const token = JSON.stringify({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } });
  try {
    return { subject, result: await sender.send(message, token), id: s.id };
  } finally {
    await sender.close();
  }
}

describe("the VAPID subject", () => {
  it("is Herald's https:// public URL unless set, which Apple's push service takes", async () => {
    const { subject, result, id } = await pushWith({
      HERALD_PUBLIC_URL: "https://herald.example.net/",
    });
    expect(subject).toBe("https://herald.example.net");
    expect(result).toEqual({ kind: "ok" });
    expect(apple.received.find((r) => r.subscription === id)?.vapid.sub).toBe(subject);
  });

  it("when nothing names a reachable contact, is refused by Apple's, and the failure says what to set", async () => {
    // No public URL, or a plain http:// one on this network: the fallback, on localhost.
    const settings: Record<string, string>[] = [
      {},
      { HERALD_PUBLIC_URL: "http://192.168.1.20:8080" },
    ];
    for (const env of settings) {
      const { subject, result, id } = await pushWith(env);
      expect(subject).toBe("mailto:owner@localhost");
      expect(result).toEqual({
        kind: "permanent",
        reason:
          "web push rejected our request (HTTP 403): its VAPID subject, mailto:owner@localhost, is no contact a push service can reach, and Apple's refuses it; set HERALD_PUBLIC_URL to Herald's https:// address, or HERALD_VAPID_SUBJECT",
      });
      expect(apple.received.find((r) => r.subscription === id)).toBeUndefined();
    }
    // Set, it is used as it is.
    const set = await pushWith({ HERALD_VAPID_SUBJECT: "mailto:ops@herald.example.net" });
    expect(set.result).toEqual({ kind: "ok" });
    expect(apple.received.find((r) => r.subscription === set.id)?.vapid.sub).toBe(
      "mailto:ops@herald.example.net",
    );
  });
});
