import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFcmSender } from "../../src/delivery/senders/fcm.ts";
import { unconfiguredSender } from "../../src/delivery/senders/sender.ts";
import { type FakeFcm, startFakeFcm } from "../fakes/fcm-server.ts";
import { newAccount, pushDevice, settled } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let fcm: FakeFcm;
let server: TestServer;
beforeAll(async () => {
  fcm = await startFakeFcm();
  server = await startServer({}, [
    unconfiguredSender("ios", "APNs is not configured"),
    createFcmSender({ serviceAccountFile: fcm.serviceAccountFile, agent: fcm.agent }),
    unconfiguredSender("web", "Web Push is not configured"),
  ]);
});
afterAll(async () => {
  await server.close();
  await fcm.close();
});

let counter = 0;
async function android() {
  counter++;
  const account = await newAccount(server, `fcm${counter}@example.com`);
  const pushToken = `fcm-token-${counter}:APA91b${"x".repeat(20)}`;
  const { deviceId } = await pushDevice(server, account, "android", {
    case: "pushToken",
    value: pushToken,
  });
  return { token: account.token, pushToken, deviceId };
}

describe("FCM", () => {
  it.each([
    ["high", "high"],
    ["normal", "normal"],
    ["low", "normal"],
  ])("priority %s → android.priority %s, with ttl and collapse key", async (priority, expected) => {
    const a = await android();
    const res = await notify(
      server,
      { title: "Build failed", message: "main is red", priority, ttl_seconds: 300 },
      { authorization: `Bearer ${a.token}` },
    );
    expect((await settled(server, a.token, res.json.id)).status).toBe("sent");
    const got = fcm.received.find((r) => r.token === a.pushToken);
    expect(got?.message.android?.priority).toBe(expected);
    expect(got?.message.android?.collapse_key).toBe(res.json.id);
    const ttl = Number.parseFloat(String(got?.message.android?.ttl));
    expect(ttl).toBeGreaterThan(295);
    expect(ttl).toBeLessThanOrEqual(300);
    expect(got?.message.notification).toEqual({ title: "Build failed", body: "main is red" });
    expect(got?.message.data).toMatchObject({
      id: res.json.id,
      topic: "default",
      truncated: "false",
    });
    expect(fcm.tokensIssued()).toBeGreaterThanOrEqual(1);
  });

  it("sends over HTTP/2, many pushes as streams of a connection or two", async () => {
    const a = await android();
    const before = { sessions: fcm.sessionsOpened(), received: fcm.received.length };
    const ids = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await notify(
          server,
          { title: `Build ${i}`, message: "done" },
          { authorization: `Bearer ${a.token}` },
        );
        return res.json.id as string;
      }),
    );
    for (const id of ids) expect((await settled(server, a.token, id)).status).toBe("sent");
    const mine = fcm.received.slice(before.received).filter((r) => r.token === a.pushToken);
    expect(mine).toHaveLength(40);
    expect(new Set(mine.map((r) => r.httpVersion))).toEqual(new Set(["2.0"]));
    // HTTP/1.1 would have opened a connection per push in flight; the pool opens at most 4.
    expect(fcm.sessionsOpened() - before.sessions).toBeLessThanOrEqual(4);
  });

  it("sends a question as data only, with its actions, for the app to show with buttons", async () => {
    const a = await android();
    const actions = [{ id: "yes", label: "Deploy", reply: false }];
    const res = await notify(
      server,
      { title: "Deploy v42?", message: "api", actions },
      { authorization: `Bearer ${a.token}` },
    );
    await settled(server, a.token, res.json.id);
    const got = fcm.received.find((r) => r.token === a.pushToken);
    expect(got?.message.notification).toBeUndefined();
    expect(got?.message.data).toMatchObject({
      id: res.json.id,
      title: "Deploy v42?",
      message: "api",
    });
    expect(JSON.parse(String(got?.message.data?.actions))).toEqual(actions);
  });

  it("clears it on the phone with a data message when another device acknowledges it", async () => {
    const account = await newAccount(server, "fcm-clear@example.com");
    const phoneToken = `fcm-clear-1:APA91b${"y".repeat(20)}`;
    const otherToken = `fcm-clear-2:APA91b${"y".repeat(20)}`;
    await pushDevice(server, account, "android", { case: "pushToken", value: phoneToken });
    const other = await pushDevice(server, account, "android", {
      case: "pushToken",
      value: otherToken,
    });
    const res = await notify(
      server,
      { title: "Deploy v42?", actions: [{ id: "yes", label: "Deploy" }] },
      { authorization: `Bearer ${account.token}` },
    );
    const id = res.json.id as string;
    await settled(server, account.token, id);
    const answered = await fetch(`${server.url}/v1/inbox/${id}/respond`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.credential}`, "content-type": "application/json" },
      body: JSON.stringify({ action_id: "yes" }),
    });
    expect(answered.status).toBe(200);
    const clearOf = (token: string) =>
      fcm.received.find((r) => r.token === token && r.message.data?.type === "clear");
    await waitFor(() => clearOf(phoneToken) !== undefined);
    const clear = clearOf(phoneToken);
    expect(clear?.message.notification).toBeUndefined();
    expect(clear?.message.data).toEqual({ type: "clear", id });
    expect(clearOf(otherToken)).toBeUndefined();
  });

  it("fits a maximal notification into 4096 bytes", async () => {
    const a = await android();
    const res = await notify(
      server,
      { title: "😀".repeat(120), message: "漢".repeat(2048) },
      { authorization: `Bearer ${a.token}` },
    );
    expect((await settled(server, a.token, res.json.id)).status).toBe("sent");
    const got = fcm.received.find((r) => r.token === a.pushToken);
    expect(got?.bytes).toBeLessThanOrEqual(4096);
    expect(got?.message.data?.truncated).toBe("true");
  });

  it("disables the device on UNREGISTERED", async () => {
    const a = await android();
    fcm.script(a.pushToken, [{ status: 404, fcmError: "UNREGISTERED" }]);
    const res = await notify(server, { title: "gone" }, { authorization: `Bearer ${a.token}` });
    const n = await settled(server, a.token, res.json.id);
    expect(n.status).toBe("failed");
    expect(n.device_deliveries[0].last_error).toMatch(/registration-token-not-registered/);
    const [row] = await sql(server.databaseUrl, "select enabled from device where id = $1", [
      a.deviceId,
    ]);
    expect(row).toMatchObject({ enabled: false });
  });

  it("retries QUOTA_EXCEEDED (429) and then delivers", async () => {
    const a = await android();
    fcm.script(a.pushToken, [{ status: 429, fcmError: "QUOTA_EXCEEDED", retryAfter: "1" }]);
    const started = Date.now();
    const res = await notify(server, { title: "later" }, { authorization: `Bearer ${a.token}` });
    const n = await settled(server, a.token, res.json.id, 15000);
    expect(n.status).toBe("sent");
    expect(n.device_deliveries[0].attempts).toBe(2);
    // Retry-After: 1 was honoured.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it("reports SENDER_ID_MISMATCH as our configuration (the Firebase project), keeping the device", async () => {
    const a = await android();
    fcm.script(a.pushToken, [{ status: 403, fcmError: "SENDER_ID_MISMATCH" }]);
    const res = await notify(
      server,
      { title: "other project" },
      {
        authorization: `Bearer ${a.token}`,
      },
    );
    const n = await settled(server, a.token, res.json.id);
    expect(n.status).toBe("failed");
    expect(n.device_deliveries[0].last_error).toMatch(
      /mismatched-credential.*belongs to another Firebase project/,
    );
    const [row] = await sql(server.databaseUrl, "select enabled from device where id = $1", [
      a.deviceId,
    ]);
    expect(row).toMatchObject({ enabled: true });
  });

  it("fetches a new access token and sends again when FCM calls Herald's expired", async () => {
    const a = await android();
    const first = await notify(server, { title: "one" }, { authorization: `Bearer ${a.token}` });
    expect((await settled(server, a.token, first.json.id)).status).toBe("sent");
    const before = fcm.received.filter((r) => r.token === a.pushToken).length;
    fcm.expireTokens();
    const res = await notify(server, { title: "two" }, { authorization: `Bearer ${a.token}` });
    const n = await settled(server, a.token, res.json.id);
    expect(n.status).toBe("sent");
    expect(fcm.received.filter((r) => r.token === a.pushToken)).toHaveLength(before + 1);
    expect(fcm.tokensIssued()).toBe(1);
  });

  it("reports THIRD_PARTY_AUTH_ERROR as configuration, keeping the device", async () => {
    const a = await android();
    fcm.script(a.pushToken, [{ status: 401, fcmError: "THIRD_PARTY_AUTH_ERROR" }]);
    const res = await notify(
      server,
      { title: "misconfigured" },
      { authorization: `Bearer ${a.token}` },
    );
    const n = await settled(server, a.token, res.json.id);
    expect(n.status).toBe("failed");
    expect(n.device_deliveries[0].last_error).toMatch(/check the FCM service account/);
    const [row] = await sql(server.databaseUrl, "select enabled from device where id = $1", [
      a.deviceId,
    ]);
    expect(row).toMatchObject({ enabled: true });
  });
});
