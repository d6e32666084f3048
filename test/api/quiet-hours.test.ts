/**
 * Quiet hours per device (issue 25, item 4): set with a CLI token, with the device's own
 * credential (never another's), and checked (an unknown time zone, an empty span). During them a
 * `low` or `normal` notification arrives silently on every platform, at the fake providers as the
 * real libraries send it: APNs `interruption-level: passive`, FCM low priority, Web Push `quiet`
 * in the payload and `Urgency: low`, a stream's `quiet`; `high` breaks through; outside them
 * nothing changes.
 */

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { clockOf } from "../../src/domain/quiet-hours.ts";
import type { FakeApns } from "../fakes/apns-server.ts";
import type { FakeFcm } from "../fakes/fcm-server.ts";
import type { FakeWebPush } from "../fakes/web-push-server.ts";
import { newAccount, pushDevice, settled, type TestAccount } from "../helpers/accounts.ts";
import { body } from "../helpers/http.ts";
import { notify, startEveryPlatform, type TestServer } from "../helpers/server.ts";
import { bearer, signInStreamDevice } from "../helpers/streams.ts";

let apns: FakeApns;
let fcm: FakeFcm;
let web: FakeWebPush;
let server: TestServer;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ apns, fcm, web, server, close } = await startEveryPlatform());
});
afterAll(async () => close());

/** Quiet hours around now (UTC), or well away from now. */
function span(now: boolean) {
  const d = new Date();
  const m = d.getUTCHours() * 60 + d.getUTCMinutes();
  const at = (delta: number) => clockOf((m + delta + 1440) % 1440);
  return now
    ? { time_zone: "UTC", start: at(-60), end: at(60) }
    : { time_zone: "UTC", start: at(120), end: at(180) };
}

const setQuiet = (id: string, credential: string, quietHours: unknown) =>
  fetch(`${server.url}/v1/devices/${id}/quiet-hours`, {
    method: "PUT",
    headers: { authorization: `Bearer ${credential}` },
    body: JSON.stringify(quietHours === undefined ? {} : { quiet_hours: quietHours }),
  });

let n = 0;
async function phoneAndFriends(account: TestAccount) {
  n++;
  const apnsToken = `a${n}`.padStart(64, "0");
  const fcmToken = `fcm-quiet-${n}:APA91b${"x".repeat(20)}`;
  const sub = web.subscribe();
  const ios = await pushDevice(server, account, "ios", { case: "pushToken", value: apnsToken });
  const android = await pushDevice(server, account, "android", {
    case: "pushToken",
    value: fcmToken,
  });
  const browser = await pushDevice(server, account, "web", {
    case: "webPush",
    value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
  });
  return { apnsToken, fcmToken, sub, ids: [ios.deviceId, android.deviceId, browser.deviceId] };
}

describe("quiet hours", () => {
  it("are set by the account or the device itself, never another device, and checked", async () => {
    const account = await newAccount(server, "quiet-set@example.com");
    const a = await pushDevice(server, account, "ios", {
      case: "pushToken",
      value: "b1".padStart(64, "0"),
    });
    const b = await pushDevice(server, account, "ios", {
      case: "pushToken",
      value: "b2".padStart(64, "0"),
    });
    const night = { time_zone: "Europe/Paris", start: "22:00", end: "07:00" };
    const set = await setQuiet(a.deviceId, account.token, night);
    expect(set.status).toBe(200);
    expect((await body(set)).quiet_hours).toEqual(night);
    expect((await setQuiet(b.deviceId, b.credential, night)).status).toBe(200);
    expect((await setQuiet(a.deviceId, b.credential, night)).status).toBe(404);
    const bad = await body(
      await setQuiet(a.deviceId, account.token, { ...night, time_zone: "Mars/Olympus" }),
    );
    expect(bad.errors[0]).toMatchObject({ field: "quiet_hours.time_zone" });
    const empty = await body(await setQuiet(a.deviceId, account.token, { ...night, end: "22:00" }));
    expect(empty.errors[0]).toMatchObject({ field: "quiet_hours.end" });
    const format = await body(
      await setQuiet(a.deviceId, account.token, { ...night, start: "10pm" }),
    );
    expect(format.errors[0]).toMatchObject({ field: "quiet_hours.start" });
    const cleared = await body(await setQuiet(a.deviceId, account.token, undefined));
    expect(cleared.quiet_hours).toBeNull();
  });

  it("silence low and normal on every platform during them; high breaks through", async () => {
    const account = await newAccount(server, "quiet-push@example.com");
    const d = await phoneAndFriends(account);
    for (const id of d.ids)
      expect((await setQuiet(id, account.token, span(true))).status).toBe(200);
    const auth = { authorization: `Bearer ${account.token}` };
    const calm = await notify(server, { title: "nightly report", priority: "normal" }, auth);
    const page = await notify(server, { title: "db-1 down", priority: "high" }, auth);
    await settled(server, account.token, calm.json.id);
    await settled(server, account.token, page.json.id);
    const phone = (id: string) => apns.received.find((r) => r.payload.id === id);
    expect(phone(calm.json.id)?.payload.aps).toMatchObject({ "interruption-level": "passive" });
    expect(phone(calm.json.id)?.headers["apns-priority"]).toBe("5");
    expect(phone(page.json.id)?.payload.aps).toMatchObject({
      "interruption-level": "time-sensitive",
    });
    const android = (id: string) => fcm.received.find((r) => r.message.data?.id === id)?.message;
    expect(android(calm.json.id)?.android).toMatchObject({
      priority: "normal",
      notification: { notification_priority: "PRIORITY_LOW", default_sound: false },
    });
    expect(android(page.json.id)?.android?.priority).toBe("high");
    const browser = (id: string) => web.received.find((r) => r.payload.id === id);
    expect(browser(calm.json.id)).toMatchObject({ urgency: "low", payload: { quiet: true } });
    expect(browser(page.json.id)?.payload.quiet).toBeUndefined();
    expect(browser(page.json.id)?.urgency).toBe("high");
  });

  it("change nothing outside them", async () => {
    const account = await newAccount(server, "quiet-day@example.com");
    const d = await phoneAndFriends(account);
    for (const id of d.ids) await setQuiet(id, account.token, span(false));
    const res = await notify(
      server,
      { title: "deploy done" },
      { authorization: `Bearer ${account.token}` },
    );
    await settled(server, account.token, res.json.id);
    expect(apns.received.find((r) => r.payload.id === res.json.id)?.payload.aps).toMatchObject({
      "interruption-level": "active",
    });
    expect(web.received.find((r) => r.payload.id === res.json.id)?.payload.quiet).toBeUndefined();
  });

  it("mark a stream's notification quiet during them, and high not", async () => {
    const device = await signInStreamDevice(server.url, "terminal-quiet", ["quiet"]);
    expect((await setQuiet(device.id, device.credential, span(true))).status).toBe(200);
    const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: server.url }));
    const abort = new AbortController();
    const seen: [string, boolean][] = [];
    const reading = (async () => {
      try {
        for await (const m of inbox.subscribe(
          {},
          { ...bearer(device.credential), signal: abort.signal },
        )) {
          if (m.event.case === "keepalive" && seen.length === 0) {
            await notify(server, { title: "calm", topic: "quiet" });
            await notify(server, { title: "loud", topic: "quiet", priority: "high" });
          }
          if (m.event.case === "notification") seen.push([m.event.value.title, m.quiet]);
          if (seen.length === 2) abort.abort();
        }
      } catch {
        // aborted
      }
    })();
    await reading;
    expect(seen).toEqual([
      ["calm", true],
      ["loud", false],
    ]);
  });
});
