/**
 * A live device hears its own process first (issue 11): a publish committed by the process a
 * stream device is connected to is handed over in memory, before any fan-out; publishes through
 * other processes arrive through the fan-out's NOTIFY; each reaches the device exactly once and
 * its delivery is recorded as sent. Topic filter changes made through any process apply. Most
 * of it with the fan-out left to workers (HERALD_FAN_OUT_AT_COMMIT=0), so that the device gets
 * a notification before its delivery exists; the last part with publishes fanned out at their
 * commit, which needs no worker at all.
 */
import { randomUUID } from "node:crypto";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { sql } from "../helpers/db.ts";
import { notify, startPeer, startServer, type TestServer } from "../helpers/server.ts";
import { bearer, listen, signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

// No worker on A or B, and no fan-out at commit: nothing is fanned out until a worker starts.
const noWorker = { workerEnabled: false, streamKeepaliveMs: 300, fanOutAtCommit: 0 };
let a: TestServer;
let b: { url: string; close(): Promise<void> };
beforeAll(async () => {
  a = await startServer(noWorker);
  b = await startPeer(a, noWorker);
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function deliveryStates(deviceId: string, databaseUrl = a.databaseUrl) {
  return sql<{ title: string; state: string }>(
    databaseUrl,
    `select n.title, d.state from delivery d join notification n on n.id = d.notification_id
      where d.device_id = $1 order by n.title`,
    [deviceId],
  );
}

describe("a stream device on process A", () => {
  it("receives exactly once what is published through A (in memory) and through B (fan-out)", async () => {
    const dev = await signInStreamDevice(a.url, "on A");
    const s = listen(a.url, dev.credential);
    await pause(200);
    expect((await notify(a, { title: "through A" })).status).toBe(202);
    expect((await notify({ ...a, url: b.url }, { title: "through B" })).status).toBe(202);
    // No fan-out has run: only the handover can have brought A's publish.
    await s.until(() => s.titles.length >= 1);
    await pause(300);
    expect(s.titles).toEqual(["through A"]);
    expect(await deliveryStates(dev.id)).toEqual([]);

    // A worker fans both out: B's arrives; A's is recorded as sent, not sent again.
    const worker = await startPeer(a, { streamKeepaliveMs: 300 });
    try {
      await s.until(() => s.titles.length >= 2);
      for (let i = 0; i < 100; i++) {
        const states = await deliveryStates(dev.id);
        if (states.length === 2 && states.every((r) => r.state === "sent")) break;
        await pause(50);
      }
      expect(await deliveryStates(dev.id)).toEqual([
        { title: "through A", state: "sent" },
        { title: "through B", state: "sent" },
      ]);
      await pause(300);
      expect(s.titles).toEqual(["through A", "through B"]);
      expect(new Set(s.ids).size).toBe(2);
    } finally {
      await worker.close();
      await s.stop();
    }
  });

  /**
   * A stream device of A that got `title` in memory and acknowledges it while no worker has
   * fanned it out; after `lateMs` a peer with a worker starts. Gives what `check` needs.
   */
  async function ackBeforeFanOut(
    title: string,
    topic: string,
    lateMs: number,
    check: (dev: { id: string }, s: ReturnType<typeof listen>) => Promise<void>,
    receipt: (
      inbox: Client<typeof InboxService>,
      id: string,
      credential: string,
    ) => Promise<unknown> = (inbox, id, credential) =>
      inbox.ackNotification({ id }, bearer(credential)),
  ) {
    const dev = await signInStreamDevice(a.url, `acks ${topic}`, [topic]);
    const s = listen(a.url, dev.credential);
    await pause(200);
    await notify(a, { title, topic });
    await s.until(() => s.ids.length >= 1);
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: a.url, httpVersion: "1.1" }),
    );
    // No worker yet: the ack waits for the fan-out instead of answering not_found.
    const acking = receipt(inbox, s.ids[0] as string, dev.credential);
    await pause(lateMs);
    const worker = await startPeer(a, { streamKeepaliveMs: 300 });
    try {
      await acking;
      await check(dev, s);
    } finally {
      await worker.close();
      await s.stop();
    }
  }

  it("lets the device acknowledge what it got in memory, before the fan-out wrote its delivery", async () => {
    await ackBeforeFanOut("ack me", "quick", 300, async (dev, s) => {
      expect(await deliveryStates(dev.id)).toEqual([{ title: "ack me", state: "delivered" }]);
      await pause(300);
      expect(s.titles).toEqual(["ack me"]); // and never sent again
    });
  });

  it("lets the device confirm it among others (ConfirmReceipts) before the fan-out wrote its delivery", async () => {
    const nobodys = randomUUID();
    let unknown: string[] = [];
    await ackBeforeFanOut(
      "confirm me",
      "batch",
      300,
      async (dev) => {
        expect(await deliveryStates(dev.id)).toEqual([{ title: "confirm me", state: "delivered" }]);
        expect(unknown).toEqual([nobodys]);
      },
      async (inbox, id, credential) => {
        ({ unknownIds: unknown } = await inbox.confirmReceipts(
          { ids: [nobodys, id] },
          bearer(credential),
        ));
      },
    );
  });

  it("keeps the device's receipt waiting for a fan-out seconds late", async () => {
    // A busy server's worker, seconds behind: the receipt neither fails nor gives up.
    await ackBeforeFanOut("late fan-out", "patient", 2_500, async (dev) => {
      expect(await deliveryStates(dev.id)).toEqual([{ title: "late fan-out", state: "delivered" }]);
    });
  });

  it("follows a topic filter changed through another process", async () => {
    const dev = await signInStreamDevice(a.url, "filtered");
    const s = listen(a.url, dev.credential);
    await pause(200);
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: b.url, httpVersion: "1.1" }),
    );
    await devices.setTopicFilter({ topics: ["deploys"] }, bearer(dev.credential));
    await pause(200); // the change reaches A through PostgreSQL
    await notify(a, { title: "a build", topic: "builds" });
    await notify(a, { title: "a deploy", topic: "deploys" });
    await s.until(() => s.titles.length >= 1);
    await pause(300);
    expect(s.titles).toEqual(["a deploy"]);
    await s.stop();
  });

  it("hands nothing to a stream of a device signed out meanwhile", async () => {
    const dev = await signInStreamDevice(a.url, "leaving");
    const s = listen(a.url, dev.credential);
    await pause(200);
    await notify(a, { title: "before" });
    await s.until(() => s.titles.length >= 1);
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: b.url, httpVersion: "1.1" }),
    );
    await devices.signOutDevice({}, bearer(dev.credential));
    await pause(200);
    await notify(a, { title: "after" });
    await pause(400);
    expect(s.titles).toEqual(["before"]);
    await s.stop();
  });
});

describe("a publish fanned out at its commit", () => {
  it("reaches stream devices on every process exactly once, with no worker running", async () => {
    const atCommit = { workerEnabled: false, streamKeepaliveMs: 300 };
    const c = await startServer(atCommit);
    const d = await startPeer(c, atCommit);
    try {
      const onC = await signInStreamDevice(c.url, "on C");
      const onD = await signInStreamDevice(d.url, "on D");
      const [sc, sd] = [listen(c.url, onC.credential), listen(d.url, onD.credential)];
      await pause(200);
      expect((await notify(c, { title: "through C" })).status).toBe(202);
      expect((await notify({ ...c, url: d.url }, { title: "through D" })).status).toBe(202);
      // Each device: its own process's publish in memory, the other's by the commit's NOTIFY.
      await sc.until(() => sc.titles.length >= 2);
      await sd.until(() => sd.titles.length >= 2);
      const sent = [
        { title: "through C", state: "sent" },
        { title: "through D", state: "sent" },
      ];
      for (const dev of [onC, onD]) {
        const states = () => deliveryStates(dev.id, c.databaseUrl);
        await waitFor(async () => JSON.stringify(await states()) === JSON.stringify(sent));
        expect(await states()).toEqual(sent);
      }
      await pause(300);
      expect([...sc.titles].sort()).toEqual(["through C", "through D"]);
      expect([...sd.titles].sort()).toEqual(["through C", "through D"]);
      await Promise.all([sc.stop(), sd.stop()]);
    } finally {
      await d.close();
      await c.close();
    }
  });
});
