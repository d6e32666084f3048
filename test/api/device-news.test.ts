/**
 * A device's change (its topics, quiet hours, or its sign-out) reaches the live streams of every
 * process: the transaction that changes it NOTIFYs `herald_device` (db/repositories/devices.ts),
 * and a stream hub that could not listen for a while reads its streams' devices again when it
 * listens again. Before, the service NOTIFYed after the commit through its own hub, so a
 * process killed in between, or one whose LISTEN connection was away, left another process
 * handing a signed-out device's stream what that process published.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { DeviceRepository } from "../../src/db/index.ts";
import { newAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import {
  capturedLog,
  notify,
  startPeer,
  startServer,
  type TestServer,
  testTokenKeys,
} from "../helpers/server.ts";
import { bearer, listen, signInStreamDevice } from "../helpers/streams.ts";
import { startDatabaseProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let proxy: TcpProxy;
let server: TestServer;
const log = capturedLog("info");
const said = (msg: string) => log.entries().some((e) => e.msg === msg);
beforeAll(async () => {
  const db = await startDatabaseProxy(inject("pgServerUrl"));
  proxy = db;
  server = await startServer({ streamKeepaliveMs: 200 }, undefined, db.through, log.logger);
});
afterAll(async () => {
  await proxy.up().catch(() => {});
  await server.close();
  await proxy.close();
});

/** A device's live stream: the titles it got, and how it ended (undefined: by `stop`). */
function stream(credential: string) {
  const abort = new AbortController();
  const titles: string[] = [];
  const cleared: { id: string; by: string }[] = [];
  const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: server.url }));
  const state = { opened: false, keepalives: 0 };
  const ended = (async () => {
    try {
      for await (const m of inbox.subscribe({}, { ...bearer(credential), signal: abort.signal })) {
        state.opened = true;
        if (m.event.case === "notification") titles.push(m.event.value.title);
        if (m.event.case === "keepalive") state.keepalives++;
        if (m.event.case === "cleared")
          cleared.push({ id: m.event.value.id, by: m.event.value.byDeviceId });
      }
    } catch (err) {
      if (!abort.signal.aborted) return ConnectError.from(err);
    }
    return undefined;
  })();
  return {
    titles,
    cleared,
    ended,
    get opened() {
      return state.opened;
    },
    /** Keepalives: one at once, then one each time it waited idle (the catch-up done). */
    get keepalives() {
      return state.keepalives;
    },
    stop: () => abort.abort(),
  };
}

describe("a device's change", () => {
  it("is NOTIFYed by the transaction that makes it, once", async () => {
    const listener = new pg.Client({ connectionString: server.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (m) => heard.push(m.payload ?? ""));
    await listener.query("listen herald_device");
    try {
      const devices = new DeviceRepository(server.orm, testTokenKeys);
      const a = await signInStreamDevice(server.url, "a");
      const b = await signInStreamDevice(server.url, "b");
      await devices.setTopics(server.accountId, a.id, ["deploys"], true);
      await devices.setQuietHours(server.accountId, a.id, null);
      expect(await devices.signOut(server.accountId, a.id)).toBe(true);
      // Signed out before: nothing changes, and nobody is told.
      expect(await devices.signOut(server.accountId, a.id)).toBe(false);
      await devices.setTopics(server.accountId, b.id, [], true);
      await waitFor(() => heard.includes(b.id));
      expect(heard).toEqual([a.id, a.id, a.id, b.id]);
    } finally {
      await listener.end();
    }
  });

  it("ends the open streams of an account deleted", async () => {
    const a = await newAccount(server, "leaving@example.com");
    const gone = await signInStreamDevice(server.url, "gone", [], a.email, a.password);
    const onIt = stream(gone.credential);
    await waitFor(() => onIt.opened);
    expect(onIt.opened).toBe(true);
    const res = await fetch(`${server.url}/v1/account/delete`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}` },
      body: JSON.stringify({ confirm_email: a.email, password: a.password }),
    });
    expect(res.status, await res.text()).toBe(200);
    const ended = await onIt.ended;
    expect(ended?.code).toBe(Code.Unauthenticated);
  });

  it("made while a process could not listen ends its streams of a signed-out device once it listens again", async () => {
    const peer = await startPeer(server);
    const laptop = await signInStreamDevice(server.url, "laptop");
    const phone = await signInStreamDevice(server.url, "phone");
    const onLaptop = stream(laptop.credential);
    const onPhone = listen(server.url, phone.credential);
    try {
      // Both streams caught up and idle (a second keepalive): a stream whose catch-up meets the
      // outage ends, and its client subscribes again; these test streams would not.
      await waitFor(() => onLaptop.keepalives >= 2 && onPhone.keepalives() >= 2);
      expect([onLaptop.keepalives, onPhone.keepalives()].every((k) => k >= 2)).toBe(true);
      // The server's LISTEN connection is cut; the laptop is signed out through the peer, whose
      // news the server cannot hear.
      await proxy.down();
      const away = "the stream hub: the database is unavailable; waiting for it";
      await waitFor(() => said(away));
      expect(said(away)).toBe(true);
      const devices = createClient(
        DeviceService,
        createConnectTransport({ baseUrl: peer.url, httpVersion: "1.1" }),
      );
      await devices.signOutDevice({}, bearer(laptop.credential));
      await proxy.up();
      await waitFor(() => said("the stream hub: the database is back"), 10_000);
      expect(said("the stream hub: the database is back")).toBe(true);
      // The laptop's stream ends, as it would have at once had the server heard.
      const ended = await onLaptop.ended;
      expect(ended?.code).toBe(Code.Unauthenticated);
      expect(ended?.rawMessage).toBe("this device is signed out");

      // Published through the server, whose streams the laptop's is still one of.
      let res = await notify(server, { title: "after the sign-out" });
      for (let i = 0; i < 50 && res.status === 503; i++) {
        await new Promise((r) => setTimeout(r, 100));
        res = await notify(server, { title: "after the sign-out" });
      }
      expect(res.status, res.text).toBe(202);
      await waitFor(() => onPhone.titles.includes("after the sign-out"));
      expect(onPhone.titles).toContain("after the sign-out");
      expect(onLaptop.titles).toEqual([]);
    } finally {
      onLaptop.stop();
      await onPhone.stop();
      await peer.close();
    }
  });
});

describe("an acknowledgement made while a process could not listen", () => {
  it("clears the notification on that process's streams once it listens again", async () => {
    const peer = await startPeer(server);
    const laptop = await signInStreamDevice(server.url, "laptop, later");
    const phone = await signInStreamDevice(server.url, "phone, later");
    const onLaptop = stream(laptop.credential);
    const count = (msg: string) => log.entries().filter((e) => e.msg === msg).length;
    const [away, back] = ["unavailable; waiting for it", "back"].map(
      (s) => `the stream hub: the database is ${s}`,
    ) as [string, string];
    try {
      await waitFor(() => onLaptop.opened);
      expect(onLaptop.opened).toBe(true);
      const res = await notify(server, {
        title: "db down, later",
        require_ack: true,
        repeat_every_seconds: 3600,
      });
      expect(res.status, res.text).toBe(202);
      const id = res.json.id as string;
      const phoneHasIt = async () =>
        (await sql(server.databaseUrl, "select 1 from delivery where device_id = $1", [phone.id]))
          .length === 1;
      await waitFor(async () => onLaptop.titles.includes("db down, later") && (await phoneHasIt()));
      expect(onLaptop.titles).toContain("db down, later");
      // Its stream marked it sent and waits idle again (as above: none of its work meets the outage).
      const kept = onLaptop.keepalives;
      await waitFor(() => onLaptop.keepalives >= kept + 2);
      expect(onLaptop.keepalives).toBeGreaterThanOrEqual(kept + 2);
      // The server cannot hear; the phone acknowledges through the peer meanwhile.
      const [awayBefore, backBefore] = [count(away), count(back)];
      await proxy.down();
      await waitFor(() => count(away) > awayBefore);
      expect(count(away)).toBe(awayBefore + 1);
      const inbox = createClient(
        InboxService,
        createConnectTransport({ baseUrl: peer.url, httpVersion: "1.1" }),
      );
      await inbox.ackNotification({ id, acknowledge: true }, bearer(phone.credential));
      await proxy.up();
      await waitFor(() => count(back) > backBefore, 10_000);
      expect(count(back)).toBe(backBefore + 1);
      await waitFor(() => onLaptop.cleared.length > 0);
      expect(onLaptop.cleared).toEqual([{ id, by: phone.id }]);
    } finally {
      onLaptop.stop();
      await peer.close();
    }
  });
});
