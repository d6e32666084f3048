/**
 * Webhooks (issue 13, item 1): endpoints registered over REST with a secret shown once; events
 * written in the transaction of the change and POSTed signed per Standard Webhooks (verified
 * with the `standardwebhooks` library); retries with the same webhook-id; disabling after
 * repeated failures, visibly; rotation signing with both secrets; attempts and replay; another
 * project's credential reaches nothing; public URLs only unless the test setting allows.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { webhookData } from "../../src/db/webhooks/payloads.ts";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";
import { newAccount, pushDevice } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import {
  addProjectWithKey,
  apnsTestSenders,
  capturedLog,
  notify,
  startPeer,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { bearer, listen, signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";
import { type ReceivedWebhook, startWebhookReceiver } from "../helpers/webhook-receiver.ts";

const settings = {
  webhookAllowPrivate: true,
  webhookBackoffScale: 0.01,
  webhookDisableAfter: 3,
};
let apns: FakeApns;
let server: TestServer;
let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
const log = capturedLog("info");
beforeAll(async () => {
  apns = await startFakeApns();
  server = await startServer(settings, apnsTestSenders(apns), undefined, log.logger);
  hooks = await startWebhookReceiver();
});
afterAll(async () => {
  await server.close();
  await apns.close();
  await hooks.close();
});

// Each test's endpoints of the owner's project go with it, passed or failed.
afterEach(async () => {
  for (const e of (await call("/v1/webhooks")).json.endpoints as JsonBody[]) {
    await call(`/v1/webhooks/${e.id}`, { method: "DELETE" });
  }
});

const run = promisify(execFile);

/** Runs the Python verification snippet of docs/api.md on a received message. */
async function pythonVerifies(secret: string, m: ReceivedWebhook): Promise<string> {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8");
  const snippet = /```python\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf("## Webhooks")))?.[1];
  expect(snippet).toBeDefined();
  const program = `${snippet}
import json, sys
a = json.loads(sys.argv[1])
print(verify(a["secret"], a["headers"], a["body"].encode()))`;
  const arg = JSON.stringify({
    secret,
    body: m.body,
    headers: {
      "webhook-id": m.id,
      "webhook-timestamp": m.timestamp,
      "webhook-signature": m.signature,
    },
  });
  const { stdout } = await run(process.env.HERALD_PYTHON ?? "python3", ["-c", program, arg]);
  return stdout.trim();
}

async function call(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${init.key ?? server.apiKey}` },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, json: (await body(res)) as JsonBody };
}

async function register(eventTypes: string[], url = hooks.url, key?: string) {
  const res = await call("/v1/webhooks", {
    method: "POST",
    body: { url, event_types: eventTypes },
    ...(key ? { key } : {}),
  });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as { endpoint: JsonBody; secret: string };
}

/** The webhook events written about a notification, oldest first. */
const eventsAbout = async (id: string) =>
  (
    await sql<{ type: string }>(
      server.databaseUrl,
      "select type from webhook_event where subject = $1 order by id",
      [id],
    )
  ).map((r) => r.type);

describe("webhooks", () => {
  it("signs notification.created per Standard Webhooks; the secret is shown once", async () => {
    const { endpoint, secret } = await register(["notification.created"]);
    hooks.trust(secret);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const listed = await call("/v1/webhooks");
    expect(JSON.stringify(listed.json)).not.toContain(secret.slice(6));
    expect(listed.json.endpoints[0]).toMatchObject({ id: endpoint.id, enabled: true });

    const n = await notify(server, { title: "hooked", topic: "hooks" });
    await waitFor(() => hooks.of("notification.created").length >= 1);
    const [msg] = hooks.of("notification.created");
    expect(msg?.verifiedBy).toEqual([secret]);
    expect(msg?.payload.data).toMatchObject({ id: n.json.id, title: "hooked", topic: "hooks" });
    // The fields are those src/db/webhooks/payloads.ts defines, which the triggers were made of.
    expect(Object.keys(msg?.payload.data ?? {}).sort()).toEqual(
      Object.keys(webhookData["notification.created"]).sort(),
    );
    expect(Math.abs(Number(msg?.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    // docs/api.md's Python snippet verifies it too, and refuses a changed body.
    expect(await pythonVerifies(secret, msg as ReceivedWebhook)).toBe("True");
    expect(
      await pythonVerifies(secret, { ...(msg as ReceivedWebhook), body: `${msg?.body} ` }),
    ).toBe("False");
    await call(`/v1/webhooks/${endpoint.id}`, { method: "DELETE" });
  });

  it("retries a failure with the same webhook-id, lists the attempts, and replays", async () => {
    const { endpoint, secret } = await register(["notification.created"]);
    hooks.trust(secret);
    const before = hooks.received.length;
    hooks.answer(500);
    const n = await notify(server, { title: "second try" });
    await waitFor(() => hooks.received.length >= before + 2);
    const mine = hooks.received.slice(before).filter((r) => r.payload.data.id === n.json.id);
    expect(mine).toHaveLength(2);
    expect(mine[0]?.id).toBe(mine[1]?.id);
    expect(mine.every((m) => m.verifiedBy.length === 1)).toBe(true);

    // The second attempt is recorded once its answer is in, a moment after the receiver has it.
    let attempts = await call(`/v1/webhooks/${endpoint.id}/attempts`);
    await waitFor(async () => {
      attempts = await call(`/v1/webhooks/${endpoint.id}/attempts`);
      return attempts.json.attempts.length >= 2;
    });
    expect(attempts.json.attempts.map((a: JsonBody) => [a.status_code, a.succeeded])).toEqual([
      [200, true],
      [500, false],
    ]);
    expect(attempts.json.attempts[1].error).toBe("HTTP 500");

    const eventId = mine[0]?.id as string;
    const replay = await call(`/v1/webhooks/${endpoint.id}/events/${eventId}/replay`, {
      method: "POST",
      body: {},
    });
    expect(replay.status).toBe(200);
    await waitFor(() => hooks.received.filter((r) => r.id === eventId).length >= 3);
    await call(`/v1/webhooks/${endpoint.id}`, { method: "DELETE" });
  });

  it("disables an endpoint after repeated failures, says why, tells the account's devices once, and enables it again", async () => {
    const watcher = await signInStreamDevice(server.url, "webhook watcher");
    const stream = listen(server.url, watcher.credential);
    await stream.opened;
    const { endpoint, secret } = await register(["notification.created"]);
    hooks.trust(secret);
    hooks.answerAlways(503);
    const n = await notify(server, { title: "unlucky" });
    let seen: JsonBody | undefined;
    await waitFor(async () => {
      seen = (await call("/v1/webhooks")).json.endpoints.find(
        (e: JsonBody) => e.id === endpoint.id,
      );
      return seen?.enabled === false;
    });
    expect(seen?.disabled_reason).toMatch(/disabled after 3 failed attempts in a row.*HTTP 503/);
    // Said where an operator looks, once (before, only the endpoint's row said it).
    const saidOf = () =>
      log.entries().filter((e) => e.msg.startsWith("a webhook endpoint was disabled"));
    await waitFor(() => saidOf().length > 0);
    const said = saidOf();
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({
      endpoint_id: endpoint.id,
      project_id: server.projectId,
      reason: seen?.disabled_reason,
    });
    expect(log.text()).not.toContain(hooks.url);
    const tries = hooks.received.filter((r) => r.payload.data.id === n.json.id).length;
    expect(tries).toBe(3);
    // The account's devices are told, once, in the endpoint's project, topic `herald`: the
    // endpoint by its origin and id, never its whole URL (a path may hold a secret).
    const title = "A webhook endpoint was disabled";
    await stream.until(() => stream.titles.includes(title), 10_000);
    const noticeId = stream.ids[stream.titles.indexOf(title)] as string;
    const notice = (await call(`/v1/notifications/${noticeId}`)).json;
    expect(notice).toMatchObject({
      project_id: server.projectId,
      topic: "herald",
      priority: "normal",
    });
    expect(notice.message).toContain(`${new URL(hooks.url).origin} failed 3 attempts in a row`);
    expect(notice.message).toContain("HTTP 503");
    expect(notice.message).toContain(`herald webhooks enable ${endpoint.id}`);
    expect(notice.message).not.toContain(hooks.url);
    await stream.stop();
    expect(stream.titles.filter((t) => t === title)).toHaveLength(1);
    // As `curl -X POST` signs a device out: no body at all (it was 400, "(body) must be a JSON
    // object").
    const out = await fetch(`${server.url}/v1/device/sign-out`, {
      method: "POST",
      headers: bearer(watcher.credential).headers,
    });
    expect(out.status).toBe(200);
    hooks.answerAlways(undefined);
    const enabled = await call(`/v1/webhooks/${endpoint.id}/enable`, { method: "POST", body: {} });
    expect(enabled.json.endpoint).toMatchObject({ enabled: true, consecutive_failures: 0 });
    await waitFor(() => hooks.received.filter((r) => r.payload.data.id === n.json.id).length > 3);
    await call(`/v1/webhooks/${endpoint.id}`, { method: "DELETE" });
  });

  it("signs with the old and the new secret during a rotation's overlap", async () => {
    const { endpoint, secret: old } = await register(["notification.created"]);
    const rotated = await call(`/v1/webhooks/${endpoint.id}/rotate`, {
      method: "POST",
      body: { overlap_seconds: 3600 },
    });
    const fresh = rotated.json.secret as string;
    expect(fresh).not.toBe(old);
    expect(Date.parse(rotated.json.endpoint.previous_secret_until)).toBeGreaterThan(Date.now());
    hooks.trust(old, fresh);
    const n = await notify(server, { title: "both secrets" });
    await waitFor(() => hooks.received.some((r) => r.payload.data.id === n.json.id));
    const msg = hooks.received.find((r) => r.payload.data.id === n.json.id);
    expect(msg?.verifiedBy.sort()).toEqual([old, fresh].sort());
    expect(msg?.signature.split(" ")).toHaveLength(2);

    await call(`/v1/webhooks/${endpoint.id}/rotate`, {
      method: "POST",
      body: { overlap_seconds: 0 },
    });
    const m2 = await notify(server, { title: "new secret only" });
    await waitFor(() => hooks.received.some((r) => r.payload.data.id === m2.json.id));
    const only = hooks.received.find((r) => r.payload.data.id === m2.json.id);
    expect(only?.signature.split(" ")).toHaveLength(1);
    await call(`/v1/webhooks/${endpoint.id}`, { method: "DELETE" });
  });

  it("tells delivery.failed per device and notification.failed once, in their project only", async () => {
    const account = await newAccount(server, `hooks-${Date.now()}@example.com`);
    const token = `${Date.now().toString(16)}`.padStart(64, "c");
    await pushDevice(server, account, "ios", { case: "pushToken", value: token });
    apns.script(token, [{ status: 400, reason: "BadDeviceToken" }]);
    const { secret } = await register(
      ["delivery.failed", "notification.failed", "notification.created"],
      hooks.url,
      account.token,
    );
    hooks.trust(secret);
    const n = await notify(
      server,
      { title: "dead phone" },
      { authorization: `Bearer ${account.token}` },
    );
    await waitFor(() =>
      hooks.received.some(
        (r) => r.payload.type === "notification.failed" && r.payload.data.id === n.json.id,
      ),
    );
    const failed = hooks
      .of("delivery.failed")
      .filter((r) => r.payload.data.notification_id === n.json.id);
    expect(failed).toHaveLength(1);
    expect(Object.keys(failed[0]?.payload.data ?? {}).sort()).toEqual(
      Object.keys(webhookData["delivery.failed"]).sort(),
    );
    expect(failed[0]?.payload.data).toMatchObject({
      platform: "ios",
      reason: expect.stringMatching(/BadDeviceToken/),
    });
    expect(
      hooks.of("notification.failed").filter((r) => r.payload.data.id === n.json.id),
    ).toHaveLength(1);
    // The owner's project has no endpoint for these: nothing of theirs arrives here.
    // Events are written with the change they report: none was, for any endpoint.
    const theirs = await notify(server, { title: "not for this endpoint" });
    expect(await eventsAbout(theirs.json.id)).toEqual([]);
    expect(hooks.received.some((r) => r.payload.data.id === theirs.json.id)).toBe(false);
  });

  it("tells notification.delivered once, when the first device acknowledges it", async () => {
    const { secret } = await register(["notification.delivered"]);
    hooks.trust(secret);
    const a = await signInStreamDevice(server.url, "first", ["acked"]);
    const b = await signInStreamDevice(server.url, "second", ["acked"]);
    const sa = listen(server.url, a.credential);
    const sb = listen(server.url, b.credential);
    await Promise.all([sa.opened, sb.opened]);
    const n = await notify(server, { title: "read it", topic: "acked" });
    await sa.until(() => sa.titles.length >= 1);
    await sb.until(() => sb.titles.length >= 1);
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    await inbox.ackNotification({ id: n.json.id }, bearer(a.credential));
    await inbox.ackNotification({ id: n.json.id }, bearer(b.credential));
    await waitFor(() =>
      hooks.of("notification.delivered").some((r) => r.payload.data.id === n.json.id),
    );
    // Both acknowledgements are committed, and events are written with them: one was.
    expect(
      (await eventsAbout(n.json.id)).filter((t) => t === "notification.delivered"),
    ).toHaveLength(1);
    const told = hooks.of("notification.delivered").filter((r) => r.payload.data.id === n.json.id);
    expect(told).toHaveLength(1);
    expect(told[0]?.payload.data.device_id).toBe(a.id);
    await sa.stop();
    await sb.stop();
  });

  it("never lets one project's credential reach another's endpoints", async () => {
    const { endpoint } = await register(["notification.created"]);
    const other = await addProjectWithKey(server, { newAccount: true });
    const k = other.apiKey;
    expect((await call("/v1/webhooks", { key: k })).json.endpoints).toEqual([]);
    expect((await call(`/v1/webhooks/${endpoint.id}`, { method: "DELETE", key: k })).status).toBe(
      404,
    );
    expect((await call(`/v1/webhooks/${endpoint.id}/attempts`, { key: k })).status).toBe(404);
    expect(
      (await call(`/v1/webhooks/${endpoint.id}/rotate`, { method: "POST", body: {}, key: k }))
        .status,
    ).toBe(404);
    expect((await call("/v1/webhooks", { key: "hk_nope" })).status).toBe(401);
    await call(`/v1/webhooks/${endpoint.id}`, { method: "DELETE" });
  });

  it("refuses bad endpoints by field: private hosts without the test setting, unknown events", async () => {
    const strict = await startPeer(server, {});
    try {
      const post = async (b: unknown) => {
        const res = await fetch(`${strict.url}/v1/webhooks`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.apiKey}` },
          body: JSON.stringify(b),
        });
        return { status: res.status, json: await body(res) };
      };
      for (const url of [
        "http://127.0.0.1:9/x",
        "https://localhost/x",
        "http://10.0.0.1/x",
        "ftp://example.com/x",
      ]) {
        const r = await post({ url, event_types: ["notification.created"] });
        expect(r.status, url).toBe(400);
        expect(r.json.errors[0].field).toBe("url");
      }
      const unknown = await post({
        url: "https://example.com/x",
        event_types: ["notification.sent"],
      });
      expect(unknown.status).toBe(400);
      expect(unknown.json.errors[0].field).toMatch(/^event_types/);
      const none = await post({ url: "https://example.com/x", event_types: [] });
      expect(none.status).toBe(400);
    } finally {
      await strict.close();
    }
  });
});
