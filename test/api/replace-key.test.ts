/**
 * Replace in place (issue 25, item 3): `replace_key` on Notify. A later notification with the
 * same key in the project replaces the earlier one on every device, through each platform's own
 * mechanism, checked at the fake providers as the real libraries send it: APNs `apns-collapse-id`,
 * FCM's collapse key and Android notification tag, Web Push's Topic and the payload's `tag`. A
 * live stream gets a `replaced` event before the later notification; the history keeps both;
 * two projects never replace each other's; a key outside the topic charset is refused.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceTagOf } from "../../src/domain/notification.ts";
import type { FakeApns } from "../fakes/apns-server.ts";
import type { FakeFcm } from "../fakes/fcm-server.ts";
import type { FakeWebPush } from "../fakes/web-push-server.ts";
import { newAccount, pushDevice, settled } from "../helpers/accounts.ts";
import {
  addProjectWithKey,
  notify,
  startEveryPlatform,
  type TestServer,
} from "../helpers/server.ts";
import { listen, signInStreamDevice } from "../helpers/streams.ts";

let apns: FakeApns;
let fcm: FakeFcm;
let web: FakeWebPush;
let server: TestServer;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ apns, fcm, web, server, close } = await startEveryPlatform());
});
afterAll(async () => close());

/** An account with a phone, an Android device and a browser. */
async function devices(email: string) {
  const account = await newAccount(server, email);
  const apnsToken = Buffer.from(email).toString("hex").padEnd(64, "0").slice(0, 64);
  const fcmToken = `fcm-token-${email.length}:APA91b${"x".repeat(20)}`;
  const sub = web.subscribe();
  await pushDevice(server, account, "ios", { case: "pushToken", value: apnsToken });
  await pushDevice(server, account, "android", { case: "pushToken", value: fcmToken });
  await pushDevice(server, account, "web", {
    case: "webPush",
    value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
  });
  return { account, apnsToken, fcmToken, sub };
}

describe("replace_key", () => {
  it("replaces on every platform by one tag per project and key; the history keeps both", async () => {
    const d = await devices("replace@example.com");
    const auth = { authorization: `Bearer ${d.account.token}` };
    const started = await notify(
      server,
      { title: "deploy started", replace_key: "deploy-api" },
      auth,
    );
    expect(started.status, started.text).toBe(202);
    expect(started.json.replace_key).toBe("deploy-api");
    await settled(server, d.account.token, started.json.id);
    const finished = await notify(
      server,
      { title: "deploy finished", priority: "high", replace_key: "deploy-api" },
      auth,
    );
    await settled(server, d.account.token, finished.json.id);
    const tag = replaceTagOf(started.json.project_id, "deploy-api");
    expect(tag).toMatch(/^r[A-Za-z0-9_-]{31}$/);

    const toPhone = apns.received.filter((r) => r.token === d.apnsToken);
    expect(toPhone.map((r) => [r.payload.id, r.headers["apns-collapse-id"]])).toEqual([
      [started.json.id, tag],
      [finished.json.id, tag],
    ]);
    const toAndroid = fcm.received.filter((r) => r.token === d.fcmToken);
    expect(toAndroid.map((r) => r.message.android)).toEqual([
      expect.objectContaining({ collapse_key: tag, notification: { tag } }),
      expect.objectContaining({ collapse_key: tag, notification: { tag } }),
    ]);
    const toBrowser = web.received.filter((r) => r.subscription === d.sub.id);
    expect(toBrowser.map((r) => [r.topic, r.payload.tag, r.payload.priority])).toEqual([
      [tag, tag, "normal"],
      [tag, tag, "high"],
    ]);

    const history = await fetch(`${server.url}/v1/notifications?page_size=10`, { headers: auth });
    const titles = ((await history.json()) as { notifications: { title: string }[] }).notifications;
    expect(titles.map((n) => n.title)).toEqual(["deploy finished", "deploy started"]);
  });

  it("keeps its own id as the collapse id without a key, and one project's key away from another's", async () => {
    const d = await devices("replace-projects@example.com");
    const auth = { authorization: `Bearer ${d.account.token}` };
    const plain = await notify(server, { title: "no key" }, auth);
    await settled(server, d.account.token, plain.json.id);
    const push = apns.received.find((r) => r.payload.id === plain.json.id);
    expect(push?.headers["apns-collapse-id"]).toBe(plain.json.id);
    expect(web.received.find((r) => r.payload.id === plain.json.id)?.payload.tag).toBeUndefined();
    const other = await addProjectWithKey(server);
    expect(replaceTagOf(other.projectId, "deploy-api")).not.toBe(
      replaceTagOf(server.projectId, "deploy-api"),
    );
  });

  it("tells a live stream what was replaced, before the notification that replaces it", async () => {
    const device = await signInStreamDevice(server.url, "terminal", ["builds"]);
    const stream = listen(server.url, device.credential);
    await stream.opened;
    const first = await notify(server, {
      title: "build 7 running",
      topic: "builds",
      replace_key: "build-7",
    });
    await stream.until(() => stream.ids.includes(first.json.id));
    const second = await notify(server, {
      title: "build 7 passed",
      topic: "builds",
      replace_key: "build-7",
    });
    await stream.until(() => stream.ids.includes(second.json.id));
    await stream.stop();
    expect(stream.events).toEqual([
      `notification ${first.json.id}`,
      `replaced ${first.json.id} by ${second.json.id}`,
      `notification ${second.json.id}`,
    ]);
  });

  it("refuses a key outside the topic's characters or over 64", async () => {
    for (const key of ["Deploy", "a b", "x".repeat(65), ""]) {
      const res = await notify(server, { title: "t", replace_key: key });
      expect(res.status, key).toBe(400);
      expect(res.json.errors[0].field).toBe("replace_key");
    }
  });
});
