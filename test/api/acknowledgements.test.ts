/**
 * Acknowledge and escalate (issue 13, item 3), with intervals scaled down (30 s → 0.6 s):
 * a notification that asks for acknowledgement is sent again until a device acknowledges it;
 * the first acknowledgement wins, stops the repeats within an interval and clears it on the
 * other streams; one nobody acknowledges escalates once to its topic or project; webhooks
 * `notification.acknowledged` and `notification.escalated` fire once; the fields are checked.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InboxService, type SubscribeResponse } from "../../gen/herald/v1/inbox_service_pb.ts";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";
import { newAccount, pushDevice } from "../helpers/accounts.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import {
  addProjectWithKey,
  apnsTestSenders,
  notify,
  ownerPassword,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { bearer, signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver } from "../helpers/webhook-receiver.ts";

const scale = 0.02; // 30 s → 0.6 s, 60 s → 1.2 s
let server: TestServer;
let apns: FakeApns;
let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  apns = await startFakeApns();
  server = await startServer(
    { ackIntervalScale: scale, streamKeepaliveMs: 300, webhookAllowPrivate: true },
    apnsTestSenders(apns),
  );
  hooks = await startWebhookReceiver();
});
afterAll(async () => {
  await server.close();
  await apns.close();
  await hooks.close();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stream's notifications (with arrival times) and clears, by id. */
function watch(credential: string) {
  const abort = new AbortController();
  const seen: { id: string; title: string; at: number }[] = [];
  const cleared: { id: string; by: string }[] = [];
  const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: server.url }));
  const done = (async () => {
    try {
      for await (const m of inbox.subscribe({}, { ...bearer(credential), signal: abort.signal })) {
        const e = (m as SubscribeResponse).event;
        if (e.case === "notification")
          seen.push({ id: e.value.id, title: e.value.title, at: Date.now() });
        if (e.case === "cleared") cleared.push({ id: e.value.id, by: e.value.byDeviceId });
      }
    } catch {
      // aborted
    }
  })();
  return {
    seen,
    cleared,
    of: (id: string) => seen.filter((s) => s.id === id),
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}

const inbox = () =>
  createClient(InboxService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));

async function get(id: string): Promise<JsonBody> {
  return body(
    await fetch(`${server.url}/v1/notifications/${id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    }),
  );
}

/** The notification once it has escalated (or as it is after 5 s). */
async function escalated(id: string): Promise<JsonBody> {
  let n: JsonBody = {};
  await waitFor(async () => {
    n = await get(id);
    return Boolean(n.escalation_id);
  }, 5000);
  return n;
}

/** The receiver takes the owner's project's events of this type, signed with a secret it trusts. */
async function hookOn(type: string) {
  const reg = await body(
    await fetch(`${server.url}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ url: hooks.url, event_types: [type] }),
    }),
  );
  hooks.trust(reg.secret);
}

describe("acknowledge", () => {
  it("repeats until acknowledged; the first acknowledgement stops it and clears the others", async () => {
    await hookOn("notification.acknowledged");
    const a = await signInStreamDevice(server.url, "laptop", ["pager"]);
    const b = await signInStreamDevice(server.url, "phone", ["pager"]);
    const sa = watch(a.credential);
    const sb = watch(b.credential);
    await pause(200);
    const res = await notify(server, {
      title: "db down",
      topic: "pager",
      require_ack: true,
      repeat_every_seconds: 30,
    });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ require_ack: true, repeat_every_seconds: 30, repeats: 0 });
    const id = res.json.id as string;
    // Sent, then again every 0.6 s.
    await waitFor(() => sa.of(id).length >= 3 && sb.of(id).length >= 3, 5000);
    // The phone acknowledges (the person did); the laptop's later one changes nothing.
    await inbox().ackNotification({ id, acknowledge: true }, bearer(b.credential));
    const ackedAt = Date.now();
    await inbox().ackNotification({ id, acknowledge: true }, bearer(a.credential));
    await waitFor(() => sa.cleared.length >= 1 && sb.cleared.length >= 1);
    expect(sa.cleared).toEqual([{ id, by: b.id }]);
    expect(sb.cleared).toEqual([{ id, by: b.id }]);
    // No repeat later than one interval after the acknowledgement.
    await pause(1500);
    const late = [...sa.of(id), ...sb.of(id)].filter((s) => s.at > ackedAt + 600 * 1.5);
    expect(late).toEqual([]);
    const n = await get(id);
    expect(n.acknowledged_by_device_id).toBe(b.id);
    expect(Date.parse(n.acknowledged_at)).toBeLessThanOrEqual(ackedAt + 50);
    expect(n.repeats).toBeGreaterThanOrEqual(2);
    await waitFor(() => hooks.of("notification.acknowledged").length >= 1);
    await pause(300);
    const told = hooks.of("notification.acknowledged");
    expect(told).toHaveLength(1);
    expect(told[0]?.payload.data).toMatchObject({ id, device_id: b.id });
    await sa.stop();
    await sb.stop();
  });

  it("rings a phone again with each repeat (same collapse id), and stops when acknowledged", async () => {
    const account = await newAccount(server, `pager-${Date.now()}@example.com`);
    const token = `${Date.now().toString(16)}`.padStart(64, "d");
    const { deviceId, credential } = await pushDevice(server, account, "ios", {
      case: "pushToken",
      value: token,
    });
    const res = await notify(
      server,
      { title: "wake up", require_ack: true, repeat_every_seconds: 30 },
      { authorization: `Bearer ${account.token}` },
    );
    const id = res.json.id as string;
    const pushes = () => apns.received.filter((r) => r.token === token && r.payload.id === id);
    await waitFor(() => pushes().length >= 3, 5000);
    expect(new Set(pushes().map((p) => p.headers["apns-collapse-id"]))).toEqual(new Set([id]));
    await inbox().ackNotification({ id, acknowledge: true }, bearer(credential));
    await pause(300);
    const after = pushes().length;
    await pause(1500);
    expect(pushes().length).toBe(after);
    const n = await body(
      await fetch(`${server.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${account.token}` },
      }),
    );
    expect(n.acknowledged_by_device_id).toBe(deviceId);
  });

  it("a receipt alone (ack without acknowledge) does not stop the repeats", async () => {
    const a = await signInStreamDevice(server.url, "receipt only", ["receipts"]);
    const sa = watch(a.credential);
    await pause(200);
    const res = await notify(server, {
      title: "still on",
      topic: "receipts",
      require_ack: true,
      repeat_every_seconds: 30,
    });
    const id = res.json.id as string;
    await waitFor(() => sa.of(id).length >= 1);
    await inbox().ackNotification({ id }, bearer(a.credential));
    await waitFor(() => sa.of(id).length >= 3, 5000);
    expect((await get(id)).acknowledged_at).toBeNull();
    await inbox().ackNotification({ id, acknowledge: true }, bearer(a.credential));
    await sa.stop();
  });

  it("escalates once to the named topic and project when nobody acknowledges", async () => {
    await hookOn("notification.escalated");
    const res = await notify(server, {
      title: "disk full",
      require_ack: true,
      repeat_every_seconds: 30,
      escalate_after_seconds: 60,
      escalate_to_topic: "oncall-lead",
    });
    const id = res.json.id as string;
    const n = await escalated(id);
    const escalation = await get(n.escalation_id);
    expect(escalation).toMatchObject({
      topic: "oncall-lead",
      title: "Escalated: disk full",
      priority: "high",
      metadata: { escalated_from: id },
    });
    await waitFor(() => hooks.of("notification.escalated").some((h) => h.payload.data.id === id));
    await pause(1500); // no second escalation
    const list = await body(
      await fetch(`${server.url}/v1/notifications?topic=oncall-lead`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      }),
    );
    expect(
      list.notifications.filter((x: JsonBody) => x.metadata?.escalated_from === id),
    ).toHaveLength(1);
    expect(hooks.of("notification.escalated").filter((h) => h.payload.data.id === id)).toHaveLength(
      1,
    );
  });

  it("keeps the metadata's key order in the escalated copy (docs/decisions.md)", async () => {
    const res = await notify(server, {
      title: "ordered",
      require_ack: true,
      escalate_after_seconds: 60,
      escalate_to_topic: "oncall-lead",
      // Not in jsonb's order (by length, then bytes), and a key of Herald's own given by the user.
      metadata: { zeta: 1, alpha: { b: 2, a: 1 }, escalated_from: "mine", mid: [3, 1] },
    });
    const id = res.json.id as string;
    const escalation = await get((await escalated(id)).escalation_id);
    expect(Object.keys(escalation.metadata)).toEqual(["zeta", "alpha", "mid", "escalated_from"]);
    expect(Object.keys(escalation.metadata.alpha)).toEqual(["b", "a"]);
    expect(escalation.metadata).toEqual({
      zeta: 1,
      alpha: { b: 2, a: 1 },
      mid: [3, 1],
      escalated_from: id,
    });
  });

  it("escalates to another project of the account, by name, when that project accepts it", async () => {
    const lead = await addProjectWithKey(server, { name: "leads" });
    const stuck = {
      title: "queue stuck",
      topic: "jobs",
      require_ack: true,
      escalate_after_seconds: 30,
      escalate_to_project: "leads",
    };
    // A project's key stays within its project unless the target accepts escalations.
    const refused = await notify(server, stuck);
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toMatch(/project leads does not accept escalations/);
    const login = await body(
      await fetch(`${server.url}/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
      }),
    );
    const owner = { authorization: `Bearer ${login.token}` };
    // An account-wide CLI token may escalate anywhere in its account.
    const byToken = await notify(server, stuck, { ...owner, "herald-project": "default" });
    expect(byToken.status, byToken.text).toBe(202);
    const allowed = await fetch(`${server.url}/v1/projects/${lead.projectId}/accepts-escalations`, {
      method: "POST",
      headers: owner,
      body: JSON.stringify({ accepts_escalations: true }),
    });
    expect((await body(allowed)).project).toMatchObject({ accepts_escalations: true });
    const res = await notify(server, stuck);
    expect(res.status).toBe(202);
    const id = res.json.id as string;
    const n = await escalated(id);
    // In the other project (its key sees it; this project's does not), on the same topic.
    const theirs = await body(
      await fetch(`${server.url}/v1/notifications/${n.escalation_id}`, {
        headers: { authorization: `Bearer ${lead.apiKey}` },
      }),
    );
    expect(theirs).toMatchObject({
      project_id: lead.projectId,
      topic: "jobs",
      title: "Escalated: queue stuck",
    });
    const ours = await fetch(`${server.url}/v1/notifications/${n.escalation_id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(ours.status).toBe(404);
  });

  it("checks the fields: only with require_ack, a target for escalation, a project of the account", async () => {
    const cases: [object, string, RegExp][] = [
      [{ repeat_every_seconds: 60 }, "repeat_every_seconds", /only with require_ack/],
      [{ require_ack: true, repeat_every_seconds: 10 }, "repeat_every_seconds", /30/],
      [
        { require_ack: true, escalate_after_seconds: 60 },
        "escalate_after_seconds",
        /escalate_to_topic/,
      ],
      [
        { require_ack: true, escalate_to_topic: "lead" },
        "escalate_to_topic",
        /only with escalate_after_seconds/,
      ],
      [
        { require_ack: true, escalate_after_seconds: 60, escalate_to_project: "nope" },
        "escalate_to_project",
        /no project/,
      ],
    ];
    for (const [fields, field, message] of cases) {
      const r = await notify(server, { title: "x", ...fields });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      const v = (r.json.errors as { field: string; message: string }[]).find(
        (e) => e.field === field,
      );
      expect(v?.message, JSON.stringify(r.json)).toMatch(message);
    }
    // Another account's project is no target either.
    const other = await addProjectWithKey(server, { newAccount: true });
    const r = await notify(server, {
      title: "x",
      require_ack: true,
      escalate_after_seconds: 60,
      escalate_to_project: other.projectId,
    });
    expect(r.status).toBe(400);
  });
});
