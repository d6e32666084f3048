/**
 * The workers' fan-out in chunks (issue 24): a notification with more targets than
 * HERALD_FAN_OUT_CHUNK is fanned out over several committed statements, each resuming below the
 * lowest device id already given a delivery of it, and stays `queued` until its last one. Every
 * target gets one delivery, none twice, whoever does the next chunk; the publishes after it in
 * the same claim wait for it; live streams hear of each notification once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryQueue } from "../../src/db/deliveries/queue.ts";
import { type Orm, openDatabase } from "../../src/db/orm.ts";
import { newAccount, pushDevice, type TestAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { notify, startPeer, startServer, type TestServer } from "../helpers/server.ts";
import { listen, withStreamDevices } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let orm: Orm;
type WithDevices = Awaited<ReturnType<typeof withStreamDevices>>;
/** An account with 7 stream devices, one with 2. */
let seven: WithDevices;
let two: WithDevices;

beforeAll(async () => {
  // No worker in this process and no fan-out at commit: every publish waits `queued`, and
  // the fan-out happens only where a test makes it.
  server = await startServer({ workerEnabled: false, fanOutAtCommit: 0 });
  orm = await openDatabase({ url: server.databaseUrl, poolSize: 2 });
  seven = await withStreamDevices(server, "seven@example.com", 7);
  two = await withStreamDevices(server, "two@example.com", 2);
});
afterAll(async () => {
  await orm.close();
  await server.close();
});

const publish = async (account: TestAccount, title: string) => {
  const r = await notify(server, { title }, { authorization: `Bearer ${account.token}` });
  expect(r.status).toBe(202);
  return r.json.id as string;
};

/** Each notification's status and its deliveries' device ids, sorted. */
const stored = async (ids: string[]) =>
  sql<{ id: string; status: string; devices: string[] }>(
    server.databaseUrl,
    `select n.id, n.status,
            coalesce((select array_agg(d.device_id::text order by d.device_id) from delivery d
                       where d.notification_id = n.id), '{}') as devices
       from notification n where n.id = any($1) order by n.id`,
    [ids],
  );
const idsOf = (a: WithDevices) => a.devices.map((d) => d.id).sort();

describe("the workers' fan-out in chunks", () => {
  it("writes a chunk per statement, resumes where the last one ended, and holds back what follows", async () => {
    const first = await publish(seven.account, "to seven devices");
    const second = await publish(two.account, "to two devices");
    const queue = createDeliveryQueue(orm, 30);
    const step = async () => queue.fanOut(500, 3);

    expect(await step()).toEqual({ ids: [], pushes: 0, more: true });
    let rows = await stored([first, second]);
    expect(rows.map((r) => [r.status, r.devices.length])).toEqual([
      ["queued", 3],
      ["queued", 0],
    ]);
    // The chunk is the newest three targets (uuidv7 ids: the highest).
    expect(rows[0]?.devices).toEqual(idsOf(seven).slice(-3));

    expect(await step()).toEqual({ ids: [], pushes: 0, more: true });
    // The last of the seven and both of the second publish's fit the third chunk: both end.
    const third = await step();
    expect([third.ids.sort(), third.more]).toEqual([[first, second].sort(), false]);
    rows = await stored([first, second]);
    expect(rows).toEqual([
      { id: first, status: "delivering", devices: idsOf(seven) },
      { id: second, status: "delivering", devices: idsOf(two) },
    ]);
    expect(await step()).toEqual({ ids: [], pushes: 0, more: false });
  });

  it("asks a cancel to come back while the fan-out is cut short, and cancels every copy after", async () => {
    const phones = await newAccount(server, "phones@example.com");
    for (let i = 0; i < 5; i++) {
      const value = `${i}`.padStart(64, "e");
      await pushDevice(server, phones, "ios", { case: "pushToken", value });
    }
    const id = await publish(phones, "to five phones");
    const queue = createDeliveryQueue(orm, 30);
    expect(await queue.fanOut(500, 2)).toEqual({ ids: [], pushes: 2, more: true });
    const cancel = () =>
      fetch(`${server.url}/v1/notifications/${id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${phones.token}` },
      });
    const early = await cancel();
    expect([early.status, early.headers.get("retry-after")]).toEqual([409, "1"]);
    const states = () =>
      sql<{ state: string; n: number }>(
        server.databaseUrl,
        "select state, count(*)::int as n from delivery where notification_id = $1 group by state",
        [id],
      );
    // The copies made so far wait with the rest: a cancel now would miss the later chunks'.
    expect(await states()).toEqual([{ state: "pending", n: 2 }]);
    expect((await queue.fanOut(500, 10)).ids).toEqual([id]);
    expect((await cancel()).status).toBe(200);
    expect(await states()).toEqual([{ state: "canceled", n: 5 }]);
  });

  it("finishes in another worker what one left between chunks, and streams each copy once", async () => {
    const streams = seven.devices.map((d) => listen(server.url, d.credential));
    await Promise.all(streams.map((s) => s.opened));
    try {
      const id = await publish(seven.account, "cut short");
      // One chunk by a worker that then stops (as if it died), the rest by a peer's worker.
      expect((await createDeliveryQueue(orm, 30).fanOut(500, 4)).more).toBe(true);
      const peer = await startPeer(server, { fanOutChunk: 2 });
      try {
        await waitFor(async () => (await stored([id]))[0]?.status === "delivering");
      } finally {
        await peer.close();
      }
      expect((await stored([id]))[0]?.devices).toEqual(idsOf(seven));
      await Promise.all(streams.map((s) => s.until(() => s.ids.includes(id))));
      expect(streams.map((s) => s.ids.filter((x) => x === id).length)).toEqual(
        streams.map(() => 1),
      );
    } finally {
      await Promise.all(streams.map((s) => s.stop()));
    }
  });
});
