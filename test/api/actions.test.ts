/**
 * Actions on a notification (issue 14): published with up to 3 buttons, answered once by a
 * device of the account (the first answer wins, recorded with the device and time, and clears
 * the others), waited for by the publisher with WaitForResponse, and told to webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { listen, signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    streamKeepaliveMs: 300,
    signupEnabled: true,
    webhookAllowPrivate: true,
  });
});
afterAll(async () => server.close());

const deployActions = [
  { id: "yes", label: "Deploy" },
  { id: "no", label: "Cancel" },
  { id: "why", label: "Ask why", reply: true },
];

/** Answers as a device over REST. */
async function respond(credential: string, id: string, answer: JsonBody) {
  const res = await fetch(`${server.url}/v1/inbox/${id}/respond`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: JSON.stringify(answer),
  });
  return { status: res.status, json: await body(res) };
}

/** The publisher's long poll over REST. */
async function waitForResponse(id: string, timeoutSeconds: number) {
  const res = await fetch(
    `${server.url}/v1/notifications/${id}/response?timeout_seconds=${timeoutSeconds}`,
    { headers: { authorization: `Bearer ${server.apiKey}` } },
  );
  return { status: res.status, json: await body(res) };
}

/** Waits until the fan-out gave the notification to `devices` devices. */
async function fannedOut(id: string, devices: number) {
  await waitFor(async () => {
    const rows = await sql(
      server.databaseUrl,
      "select 1 from delivery where notification_id = $1",
      [id],
    );
    return rows.length === devices;
  });
}

async function askedOn(topic: string, extra: JsonBody = {}) {
  const n = await notify(server, {
    title: "Deploy api v42?",
    topic,
    actions: deployActions,
    ...extra,
  });
  expect(n.status, n.text).toBe(202);
  return n.json.id as string;
}

describe("publishing actions", () => {
  it("keeps up to 3 buttons with the notification, and refuses what does not fit, naming the field", async () => {
    const id = await askedOn("publish");
    const got = await body(
      await fetch(`${server.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      }),
    );
    expect(got.actions).toEqual([
      { id: "yes", label: "Deploy", reply: false },
      { id: "no", label: "Cancel", reply: false },
      { id: "why", label: "Ask why", reply: true },
    ]);
    expect(got.response).toBeNull();

    const refused = async (actions: unknown) => {
      const r = await notify(server, { title: "t", actions });
      expect(r.status).toBe(400);
      expect(r.json.code).toBe("invalid_argument");
      return r.json.errors.map((v: JsonBody) => v.field);
    };
    expect(await refused([...deployActions, { id: "four", label: "Four" }])).toEqual(["actions"]);
    expect(
      await refused([
        { id: "a", label: "A" },
        { id: "a", label: "B" },
      ]),
    ).toEqual(["actions"]);
    expect(await refused([{ id: "ok", label: "   " }])).toEqual(["actions[0].label"]);
    expect(await refused([{ id: "has space", label: "x" }])).toEqual(["actions[0].id"]);
    expect(await refused([{ id: "ok" }])).toEqual(["actions[0].label"]);
  });
});

describe("answering", () => {
  it("records the first answer with the device and time, ends the wait, and clears the other devices", async () => {
    const phone = await signInStreamDevice(server.url, "phone", ["answer"]);
    const laptop = await signInStreamDevice(server.url, "laptop", ["answer"]);
    const onLaptop = listen(server.url, laptop.credential);
    const hook = await fetch(`${server.url}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        url: "http://127.0.0.1:9/herald",
        event_types: ["notification.responded"],
      }),
    });
    expect(hook.status, await hook.clone().text()).toBeLessThan(300);
    await onLaptop.opened;
    const id = await askedOn("answer");
    await onLaptop.until(() => onLaptop.ids.includes(id));

    const waiting = waitForResponse(id, 20);
    // The long poll is waiting (it holds an open call) before the answer comes.
    await waitFor(
      async () =>
        (await sql<{ n: number }>(server.databaseUrl, "select count(*)::int n from open_call"))[0]
          ?.n === 1,
    );
    const answer = await respond(phone.credential, id, { action_id: "yes" });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    expect(answer.json.response).toMatchObject({ action_id: "yes", device_id: phone.id });

    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(waited.json.outcome).toBe("answered");
    expect(waited.json.notification.response).toMatchObject({
      action_id: "yes",
      device_id: phone.id,
    });
    expect(Date.parse(waited.json.notification.response.answered_at)).toBeGreaterThan(0);
    // An answer is an acknowledgement: the notification is acknowledged by the phone.
    expect(waited.json.notification.acknowledged_by_device_id).toBe(phone.id);

    // A second answer, from any device, is refused, naming the first.
    const late = await respond(laptop.credential, id, { action_id: "no" });
    expect(late.status).toBe(409);
    expect(late.json.code).toBe("already_answered");
    expect(late.json.detail).toContain('answered "yes"');
    // The laptop's stream was told to clear it, by the phone.
    await onLaptop.until(() => onLaptop.cleared.includes(id));
    expect(onLaptop.cleared).toEqual([id]);
    await onLaptop.stop();

    // Webhooks hear of it, from the transaction that recorded it.
    const [event] = await sql<{ payload: JsonBody }>(
      server.databaseUrl,
      "select payload from webhook_event where type = 'notification.responded' and subject = $1",
      [id],
    );
    expect(event?.payload.data).toMatchObject({ id, action_id: "yes", device_id: phone.id });
  });

  it("withdraws an unanswered question its asker gave up on, sent or not: closed everywhere", async () => {
    const phone = await signInStreamDevice(server.url, "phone", ["withdrawn"]);
    const onPhone = listen(server.url, phone.credential);
    await waitFor(() => onPhone.keepalives() > 0);
    const id = await askedOn("withdrawn");
    await onPhone.until(() => onPhone.ids.includes(id));
    await fannedOut(id, 1);
    const waiting = waitForResponse(id, 20);

    const res = await fetch(`${server.url}/v1/notifications/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    const canceled = await body(res);
    expect(res.status, JSON.stringify(canceled)).toBe(200);
    expect(canceled.status).toBe("canceled");
    // The wait ends at once, the stream clears it (by nobody: its asker), an answer is refused.
    expect((await waiting).json.outcome).toBe("canceled");
    await onPhone.until(() => onPhone.cleared.includes(id));
    expect(onPhone.clearedBy.get(id)).toBe("");
    const late = await respond(phone.credential, id, { action_id: "yes" });
    expect(late.status).toBe(410);
    expect(late.json.code).toBe("expired");
    // A dismissal after it changes nothing either.
    const ack = await fetch(`${server.url}/v1/inbox/${id}/ack`, {
      method: "POST",
      headers: { authorization: `Bearer ${phone.credential}`, "content-type": "application/json" },
      body: JSON.stringify({ acknowledge: true }),
    });
    expect(ack.status).toBe(200);
    const [row] = await sql<{ status: string; acknowledged_at: Date | null }>(
      server.databaseUrl,
      "select status, acknowledged_at from notification where id = $1",
      [id],
    );
    expect(row).toEqual({ status: "canceled", acknowledged_at: null });
    await onPhone.stop();

    // An answered question stays answered: nothing left to withdraw.
    const answered = await askedOn("withdrawn");
    await fannedOut(answered, 1);
    expect((await respond(phone.credential, answered, { action_id: "no" })).status).toBe(200);
    const again = await fetch(`${server.url}/v1/notifications/${answered}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(again.status).toBe(409);
    expect((await body(again)).code).toBe("not_cancelable");
  });

  it("takes exactly one of two answers given at once", async () => {
    const a = await signInStreamDevice(server.url, "a", ["race"]);
    const b = await signInStreamDevice(server.url, "b", ["race"]);
    const id = await askedOn("race");
    await fannedOut(id, 2);
    const [ra, rb] = await Promise.all([
      respond(a.credential, id, { action_id: "yes" }),
      respond(b.credential, id, { action_id: "no" }),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([200, 409]);
    const [row] = await sql<{ response_action: string; responded_by: string }>(
      server.databaseUrl,
      "select response_action, responded_by from notification where id = $1",
      [id],
    );
    const winner = ra.status === 200 ? { action: "yes", by: a.id } : { action: "no", by: b.id };
    expect(row).toEqual({ response_action: winner.action, responded_by: winner.by });
  });

  it("refuses a device of another account (404), an unknown action and a reply without text (400)", async () => {
    const mine = await signInStreamDevice(server.url, "mine", ["strict"]);
    const id = await askedOn("strict");
    await fannedOut(id, 1);
    await fetch(`${server.url}/v1/accounts`, {
      method: "POST",
      body: JSON.stringify({ email: "stranger@example.com", password: "a long enough password" }),
    });
    const stranger = await signInStreamDevice(
      server.url,
      "stranger's",
      [],
      "stranger@example.com",
      "a long enough password",
    );
    const foreign = await respond(stranger.credential, id, { action_id: "yes" });
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe("not_found");

    const unknown = await respond(mine.credential, id, { action_id: "maybe" });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors).toEqual([
      { field: "action_id", message: "must be one of the notification's actions: yes, no, why" },
    ]);
    const noText = await respond(mine.credential, id, { action_id: "why" });
    expect(noText.status).toBe(400);
    expect(noText.json.errors[0].field).toBe("text");
    const textOnButton = await respond(mine.credential, id, { action_id: "yes", text: "sure" });
    expect(textOnButton.status).toBe(400);

    const reply = await respond(mine.credential, id, { action_id: "why", text: "is CI green?" });
    expect(reply.status).toBe(200);
    const waited = await waitForResponse(id, 1);
    expect(waited.json.notification.response).toMatchObject({
      action_id: "why",
      text: "is CI green?",
    });
    // Nothing of the answer went to the other account.
    const [{ n }] = (await sql<{ n: number }>(
      server.databaseUrl,
      "select count(*)::int as n from delivery where device_id = $1",
      [stranger.id],
    )) as [{ n: number }];
    expect(n).toBe(0);
  });
});

describe("waiting for the answer", () => {
  it("says waiting after its timeout, dismissed after a plain acknowledgement, expired after the ttl", async () => {
    const dev = await signInStreamDevice(server.url, "waiter", ["wait"]);
    const id = await askedOn("wait");
    const waited = await waitForResponse(id, 1);
    expect(waited.json.outcome).toBe("waiting");
    await fannedOut(id, 1);
    const ack = await fetch(`${server.url}/v1/inbox/${id}/ack`, {
      method: "POST",
      headers: { authorization: `Bearer ${dev.credential}`, "content-type": "application/json" },
      body: JSON.stringify({ acknowledge: true }),
    });
    expect(ack.status).toBe(200);
    expect((await waitForResponse(id, 5)).json.outcome).toBe("dismissed");
    expect((await respond(dev.credential, id, { action_id: "yes" })).json.code).toBe(
      "already_answered",
    );

    const short = await askedOn("wait", { ttl_seconds: 30 });
    await sql(
      server.databaseUrl,
      "update notification set expires_at = now() - interval '1 second' where id = $1",
      [short],
    );
    expect((await waitForResponse(short, 5)).json.outcome).toBe("expired");

    const plain = await notify(server, { title: "no buttons" });
    const noActions = await waitForResponse(plain.json.id, 1);
    expect(noActions.status).toBe(409);
    expect(noActions.json.code).toBe("failed_precondition");
  });
});
