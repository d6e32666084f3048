/**
 * Fan-out and live delivery to stream devices: the right account's devices only, topic filters,
 * `since` catch-up, delivery through another server process, and per-device status.
 */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { sql } from "../helpers/db.ts";
import { body, failure, type JsonBody } from "../helpers/http.ts";
import {
  addProjectWithKey,
  notify,
  ownerPassword,
  startPeer,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { bearer, listen, signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 300 });
});
afterAll(async () => server.close());

/** How many notifications were fanned out to a device. */
const deliveriesOf = async (deviceId: string) =>
  Number(
    (
      await sql<{ n: string }>(
        server.databaseUrl,
        "select count(*) n from delivery where device_id = $1",
        [deviceId],
      )
    )[0]?.n,
  );

/** A device's delivery states, in notification order. */
const statesOf = async (deviceId: string) =>
  (
    await sql<{ state: string }>(
      server.databaseUrl,
      "select state from delivery where device_id = $1 order by notification_id",
      [deviceId],
    )
  ).map((r) => r.state);

const streamDevice = (name: string, topics: string[] = [], email?: string, password?: string) =>
  signInStreamDevice(server.url, name, topics, email, password);

describe("live delivery to stream devices", () => {
  it("delivers to this account's devices whose filter admits the topic, with keepalives", async () => {
    const all = await streamDevice("all topics");
    const deploysOnly = await streamDevice("deploys only", ["deploys"]);
    const stranger = await addProjectWithKey(server, { newAccount: true });
    const a = listen(server.url, all.credential);
    const b = listen(server.url, deploysOnly.credential);
    await Promise.all([a.opened, b.opened]);
    await notify(server, { title: "build failed", topic: "builds" });
    await notify(server, { title: "deployed", topic: "deploys" });
    await notify(server, { title: "not yours" }, { authorization: `Bearer ${stranger.apiKey}` });
    // Fanned out in publish order: once the last arrives, nothing earlier is still on its way.
    await notify(server, { title: "last", topic: "deploys" });
    await a.until(() => a.titles.includes("last"));
    await b.until(() => b.titles.includes("last"));
    expect(a.titles).toEqual(["build failed", "deployed", "last"]);
    expect(b.titles).toEqual(["deployed", "last"]);
    expect(a.keepalives()).toBeGreaterThanOrEqual(1);
    await a.stop();
    await b.stop();
  });

  it("catches up with `since` after a disconnect, in order, without duplicates", async () => {
    const dev = await streamDevice("laptop", ["catchup"]);
    const first = listen(server.url, dev.credential);
    await first.opened;
    await notify(server, { title: "one", topic: "catchup" });
    await first.until(() => first.titles.length === 1);
    await first.stop();
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    await inbox.ackNotification({ id: first.ids[0] as string }, bearer(dev.credential));
    // Missed while disconnected:
    for (const t of ["two", "three", "four"]) await notify(server, { title: t, topic: "catchup" });
    // Fanned out while it was away, so that the catch-up, not the live path, brings them.
    await waitFor(async () => (await deliveriesOf(dev.id)) === 4);
    const again = listen(server.url, dev.credential, first.ids[0]);
    await again.until(() => again.titles.length >= 3);
    await notify(server, { title: "five", topic: "catchup" });
    await notify(server, { title: "six", topic: "catchup" });
    await again.until(() => again.titles.includes("six"));
    expect(again.titles).toEqual(["two", "three", "four", "five", "six"]);
    await again.stop();
  });

  it("sends again, on a new stream without since, what was written but never acknowledged", async () => {
    const dev = await streamDevice("flaky link", ["unconfirmed"]);
    const first = listen(server.url, dev.credential);
    await first.opened;
    await notify(server, { title: "confirmed", topic: "unconfirmed" });
    await notify(server, { title: "lost on the wire", topic: "unconfirmed" });
    await first.until(() => first.titles.length === 2);
    await waitFor(async () => (await statesOf(dev.id)).every((state) => state === "sent"));
    expect(await statesOf(dev.id)).toEqual(["sent", "sent"]);
    await first.stop();
    // Only the first reached the client's acknowledgement before the stream broke.
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    await inbox.ackNotification({ id: first.ids[0] as string }, bearer(dev.credential));
    const again = listen(server.url, dev.credential);
    await again.opened;
    await notify(server, { title: "after", topic: "unconfirmed" });
    await again.until(() => again.titles.includes("after"));
    expect(again.titles).toEqual(["lost on the wire", "after"]);
    await again.stop();
  });

  it("takes `since` for the receipt of the notification it names", async () => {
    // `listen` moves its cursor, then acknowledges: an acknowledgement lost on its way (the
    // server process died, a rate limit refused it) is followed by a stream from the cursor.
    const dev = await streamDevice("lost receipt", ["receipt"]);
    const first = listen(server.url, dev.credential);
    await first.opened;
    await notify(server, { title: "shown, receipt lost", topic: "receipt" });
    await first.until(() => first.titles.length === 1);
    await first.stop();
    await waitFor(async () => (await statesOf(dev.id))[0] === "sent");
    const again = listen(server.url, dev.credential, first.ids[0]);
    await again.opened;
    expect((await statesOf(dev.id))[0]).toBe("delivered");
    await notify(server, { title: "after", topic: "receipt" });
    await again.until(() => again.titles.includes("after"));
    expect(again.titles).toEqual(["after"]);
    await again.stop();
  });

  it("sends on a stream with since what was never acknowledged, though older than since", async () => {
    // A notification fanned out late (its process died before the fan-out; another worker did
    // it after the device had heard of a newer one) is older than the device's cursor.
    const dev = await streamDevice("behind a crash", ["late"]);
    const first = listen(server.url, dev.credential);
    await first.opened;
    await notify(server, { title: "fanned out late", topic: "late" });
    await notify(server, { title: "newer", topic: "late" });
    await first.until(() => first.titles.length === 2);
    await first.stop();
    await sql(
      server.databaseUrl,
      "update delivery set state = 'pending', sent_at = null where device_id = $1 and notification_id = $2",
      [dev.id, first.ids[0]],
    );
    const again = listen(server.url, dev.credential, first.ids[1]);
    await again.opened;
    await notify(server, { title: "after", topic: "late" });
    await again.until(() => again.titles.includes("after"));
    expect(again.titles).toEqual(["fanned out late", "after"]);
    await again.stop();
  });

  it("sends on a stream with since what another client of the device confirmed after since", async () => {
    // Two clients read one device (two `herald listen`s of a machine): each one's receipts
    // confirm for the device, so the one that was away missed what the other confirmed.
    const dev = await streamDevice("read twice", ["twice"]);
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const first = listen(server.url, dev.credential);
    await first.opened;
    await notify(server, { title: "both saw", topic: "twice" });
    await first.until(() => first.titles.length === 1);
    const place = first.ids[0] as string;
    // The first client goes; the other receives one more and confirms both.
    await first.stop();
    const other = listen(server.url, dev.credential, place);
    await other.opened;
    await notify(server, { title: "while it was away", topic: "twice" });
    await other.until(() => other.titles.length === 1);
    await inbox.confirmReceipts({ ids: other.ids }, bearer(dev.credential));
    await other.stop();
    expect(await statesOf(dev.id)).toEqual(["delivered", "delivered"]);
    // The first comes back from its place: what the other confirmed after it comes again.
    const back = listen(server.url, dev.credential, place);
    await back.opened;
    await notify(server, { title: "after", topic: "twice" });
    await back.until(() => back.titles.includes("after"));
    expect(back.titles).toEqual(["while it was away", "after"]);
    await back.stop();
    // Without a place, the catch-up is what the device has not confirmed, as before.
    const fresh = listen(server.url, dev.credential);
    await fresh.opened;
    await notify(server, { title: "last", topic: "twice" });
    await fresh.until(() => fresh.titles.includes("last"));
    expect(fresh.titles).toEqual(["after", "last"]);
    await fresh.stop();
  });

  it("reaches a device connected to another server process", async () => {
    const peer = await startPeer(server, { streamKeepaliveMs: 300 });
    try {
      const dev = await streamDevice("on the peer", ["cross"]);
      const s = listen(peer.url, dev.credential);
      await s.opened;
      await notify(server, { title: "published on the first process", topic: "cross" });
      await s.until(() => s.titles.length >= 1);
      expect(s.titles).toEqual(["published on the first process"]);
      await s.stop();
    } finally {
      await peer.close();
    }
  });
});

describe("status per device", () => {
  it("moves from queued to delivered as the stream device receives, acks and opens", async () => {
    // An account of its own, so that no other device of the owner takes part.
    const email = "status@example.com";
    const password = "status password 123";
    await fetch(`${server.url}/v1/accounts`, {
      method: "POST",
      body: JSON.stringify({ email, password }),
    });
    const { token } = await body(
      await fetch(`${server.url}/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ email, password }),
      }),
    );
    const dev = await streamDevice("status watcher", [], email, password);
    const s = listen(server.url, dev.credential);
    await s.opened;
    const published = await notify(
      server,
      { title: "watch me", topic: "status", metadata: { k: 1 } },
      { authorization: `Bearer ${token}` },
    );
    expect(published.json.status).toBe("queued");
    await s.until(() => s.titles.length === 1);
    await s.stop();
    const get = async () =>
      body(
        await fetch(`${server.url}/v1/notifications/${published.json.id}`, {
          headers: { authorization: `Bearer ${token}` },
        }),
      );
    // The stream marks what it writes while writing it: allow that commit a moment.
    let sent = await get();
    await waitFor(async () => {
      sent = await get();
      return sent.status !== "delivering";
    });
    // Written to the stream is `sent`; `delivered` waits for the device to confirm it.
    expect(sent.status, JSON.stringify(sent)).toBe("sent");
    expect(sent.deliveries).toMatchObject({ total: 1, sent: 1, pending: 0 });
    expect(sent.device_deliveries).toEqual([
      expect.objectContaining({
        device_id: dev.id,
        device_name: "status watcher",
        platform: "stream",
        state: "sent",
      }),
    ]);
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const fetched = await inbox.fetchNotification(
      { id: published.json.id },
      bearer(dev.credential),
    );
    expect(fetched.notification?.metadata).toEqual({ k: 1 });
    const fetchedView = await get();
    expect(fetchedView.device_deliveries[0].state).toBe("delivered");
    expect(fetchedView.status).toBe("delivered");
    await inbox.markOpened({ id: published.json.id }, bearer(dev.credential));
    const opened = await get();
    expect(opened.device_deliveries[0]).toMatchObject({ state: "opened" });
    expect(opened.device_deliveries[0].opened_at).toBeTruthy();
    // Another device cannot fetch it.
    const other = await streamDevice("nosy", ["elsewhere"]);
    expect(
      (await failure(inbox.fetchNotification({ id: published.json.id }, bearer(other.credential))))
        .code,
    ).toBe(Code.NotFound);
  });

  it("is no_devices when no device's filter admits the topic", async () => {
    const p = await addProjectWithKey(server, { newAccount: true });
    const res = await notify(
      server,
      { title: "into the void" },
      { authorization: `Bearer ${p.apiKey}` },
    );
    // Queued until the fan-out has run: a fixed wait could end before it on a loaded machine.
    let got: JsonBody = { status: "queued" };
    await waitFor(async () => {
      got = await body(
        await fetch(`${server.url}/v1/notifications/${res.json.id}`, {
          headers: { authorization: `Bearer ${p.apiKey}` },
        }),
      );
      return got.status !== "queued";
    });
    expect(got.status).toBe("no_devices");
    expect(got.deliveries.total).toBe(0);
  });
});

describe("test notifications from the owner", () => {
  it("reach only the chosen device; an unconfigured platform fails with the reason", async () => {
    const login = await body(
      await fetch(`${server.url}/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
      }),
    );
    const owner = login.token as string;
    const chosen = await streamDevice("chosen", ["nothing-matches-this"]);
    const bystander = await streamDevice("bystander");
    const a = listen(server.url, chosen.credential);
    const b = listen(server.url, bystander.credential);
    await Promise.all([a.opened, b.opened]);
    const sent = await fetch(`${server.url}/v1/devices/${chosen.id}/test`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}` },
      body: "{}",
    });
    expect(sent.status).toBe(202);
    await a.until(() => a.titles.length === 1);
    // The bystander gets what is published after the test, and not the test before it.
    await notify(server, { title: "for everyone" });
    await b.until(() => b.titles.includes("for everyone"));
    expect(a.titles).toEqual(["Herald test notification"]);
    expect(b.titles).toEqual(["for everyone"]);
    await a.stop();
    await b.stop();

    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const ios = await devices.signInDevice({
      method: { case: "password", value: { email: "owner@example.com", password: ownerPassword } },
      name: "iPhone without APNs",
      platform: "ios",
    });
    await devices.registerChannel(
      { channel: { case: "pushToken", value: "ab".repeat(32) } },
      bearer(ios.deviceCredential),
    );
    const test = await devices.sendTestNotification(
      { id: ios.device?.id as string },
      bearer(owner),
    );
    let n = await body(
      await fetch(`${server.url}/v1/notifications/${test.notificationId}`, {
        headers: { authorization: `Bearer ${owner}` },
      }),
    );
    await waitFor(async () => {
      n = await body(
        await fetch(`${server.url}/v1/notifications/${test.notificationId}`, {
          headers: { authorization: `Bearer ${owner}` },
        }),
      );
      return n.status !== "delivering";
    });
    expect(n.status).toBe("failed");
    expect(n.device_deliveries[0]).toMatchObject({
      state: "failed",
      last_error: "APNs is not configured",
    });
  });
});

describe("a database that drops every connection (a restart, as clients see it)", () => {
  it("loses nothing: live delivery resumes and what was published meanwhile arrives", async () => {
    const dev = await streamDevice("survivor", ["survive"]);
    const s = listen(server.url, dev.credential);
    await s.opened;
    expect((await notify(server, { title: "before the drop", topic: "survive" })).status).toBe(202);
    await s.until(() => s.titles.includes("before the drop"));
    expect(s.titles).toContain("before the drop");

    const dropped = await sql<{ n: number }>(
      server.databaseUrl,
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`,
    );
    expect(dropped[0]?.n).toBeGreaterThan(0);
    // Published at once, before the stream hub can LISTEN again: its NOTIFY reaches no one, so
    // only the catch-up after the reconnect can bring it. A client retries a failed publish with
    // its idempotency key; nothing is published twice.
    let published = await notify(
      server,
      { title: "during the drop", topic: "survive" },
      { "idempotency-key": "drop-1" },
    );
    for (let i = 0; i < 20 && published.status >= 500; i++) {
      await new Promise((r) => setTimeout(r, 250));
      published = await notify(
        server,
        { title: "during the drop", topic: "survive" },
        { "idempotency-key": "drop-1" },
      );
    }
    expect([200, 202]).toContain(published.status);
    await s.until(() => s.titles.includes("during the drop"), 15_000);
    expect(s.titles.filter((t) => t === "during the drop")).toHaveLength(1);
    expect((await notify(server, { title: "after the drop", topic: "survive" })).status).toBe(202);
    await s.until(() => s.titles.includes("after the drop"));
    expect(s.titles).toContain("after the drop");
    await s.stop();
  }, 30_000);
});

describe("large fan-out batches", () => {
  it("announce in chunks that fit PostgreSQL's NOTIFY limit, so live devices get all of them", async () => {
    const dev = await streamDevice("bulk listener", ["bulk"]);
    const s = listen(server.url, dev.credential);
    await s.opened;
    // 400 notifications committed before any worker sees them: one fan-out batch of 400 ids,
    // whose JSON (~15 KB) is twice what one NOTIFY may carry.
    const { rows } = await server.orm.em
      .getConnection()
      .execute<{ id: string }[]>(
        `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
         select gen_random_uuid(), ?, 'bulk', 'bulk ' || g, '', 'normal', 'queued', now()
           from generate_series(1, 400) g returning id`,
        [server.projectId],
        "run",
      )
      .then((r) => r as unknown as { rows: { id: string }[] });
    expect(rows).toHaveLength(400);
    await s.until(() => s.titles.length >= 400, 10_000);
    expect(s.titles).toHaveLength(400);
    await s.stop();
  }, 20_000);
});

describe("a large backlog", () => {
  it("reaches a device that comes back, in full and at once, before what is published meanwhile", async () => {
    const dev = await streamDevice("away for a while", ["away"]);
    // 2,500 notifications fanned out while the device had no stream: more than one page. Their
    // ids are UUIDv7s of an hour ago, in order, as they would be had they been published then.
    await server.orm.em.getConnection().execute(
      `insert into notification (id, project_id, topic, title, message, priority, status, created_at)
         select (substr(t, 1, 8) || '-' || substr(t, 9, 4) || '-7' || lpad(to_hex(g), 3, '0')
                 || '-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
                ?, 'away', 'away ' || g, '', 'normal', 'queued', now()
           from generate_series(1, 2500) g,
                lpad(to_hex((extract(epoch from now()) * 1000)::bigint - 3600000), 12, '0') t`,
      [server.projectId],
      "run",
    );
    const fannedOut = async () =>
      Number(
        (
          await sql<{ n: string }>(
            server.databaseUrl,
            "select count(*) n from delivery where device_id = $1",
            [dev.id],
          )
        )[0]?.n,
      );
    await waitFor(async () => (await fannedOut()) >= 2500, 15_000);
    expect(await fannedOut()).toBe(2500);
    const s = listen(server.url, dev.credential);
    await s.opened;
    // Published while the stream catches up: it comes after the catch-up, not amid it.
    await notify(server, { title: "meanwhile", topic: "away" });
    const caughtUpByThen = s.ids.length;
    // The hub's sweep runs every 30 s: everything within 15 s came from the catch-up itself.
    await s.until(() => s.titles.includes("meanwhile"), 15_000);
    expect(caughtUpByThen).toBeLessThan(2500);
    expect(s.titles.slice(0, -1)).toEqual(Array.from({ length: 2500 }, (_, i) => `away ${i + 1}`));
    expect(s.titles.at(-1)).toBe("meanwhile");
    await s.stop();
  }, 40_000);
});
