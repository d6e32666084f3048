/**
 * The delivery worker's probe (db/deliveries/due-probe.ts): one read that says which of the
 * worker's statements have work. It must say yes to whatever a statement would take, and no once
 * the statement took it; and an idle worker must ask it alone, while still picking up work
 * another process committed (here, the test server's publishes: it runs no worker of its own).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workerClock } from "../../src/config.ts";
import { createDeliveryQueue, type DeliveryQueue } from "../../src/db/deliveries/queue.ts";
import { type Orm, openDatabase } from "../../src/db/orm.ts";
import { DeviceRepository } from "../../src/db/repositories/devices.ts";
import { DeliveryWorker } from "../../src/delivery/worker.ts";
import { newAccount, pushDevice, type TestAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { notify, startServer, type TestServer, testTokenKeys } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let orm: Orm;
let owner: TestAccount;

beforeAll(async () => {
  // No worker and no fan-out at commit: the test's own queue and worker do the work.
  server = await startServer({ workerEnabled: false, fanOutAtCommit: 0 });
  orm = await openDatabase({ url: server.databaseUrl, poolSize: 4 });
  owner = await newAccount(server, "probed@example.com");
  await pushDevice(server, owner, "ios", { case: "pushToken", value: "ab".repeat(32) });
});
afterAll(async () => {
  await orm.close();
  await server.close();
});

const publish = async (body: Record<string, unknown>) => {
  const r = await notify(server, body, { authorization: `Bearer ${owner.token}` });
  expect(r.status).toBe(202);
  return r.json.id as string;
};
/** Time passes: the notification's `column` (a time it waits for) becomes a second ago. */
const setColumn = (id: string, column: string) =>
  sql(
    server.databaseUrl,
    `update notification set ${column} = now() - interval '1 second' where id = $1`,
    [id],
  );

describe("the worker's probe", () => {
  it("says yes to the work each statement takes, and no once it is taken", async () => {
    const queue = createDeliveryQueue(orm, 30);
    const none = {
      scheduled: false,
      repeats: false,
      escalations: false,
      clears: false,
      queued: false,
      pushes: false,
    };
    expect(await queue.probeDue()).toEqual(none);

    const id = await publish({ title: "asks for an answer", require_ack: true });
    expect(await queue.probeDue()).toEqual({ ...none, queued: true });
    expect((await queue.fanOut(500, 1000)).ids).toEqual([id]);
    expect(await queue.probeDue()).toEqual({ ...none, pushes: true });
    expect(await queue.claimDue(500, { perAccount: 400, busy: new Map() })).toHaveLength(1);
    expect(await queue.probeDue()).toEqual(none);

    const later = await publish({ title: "later", delay_seconds: 3600 });
    expect(await queue.probeDue()).toEqual(none);
    await setColumn(later, "deliver_at");
    expect(await queue.probeDue()).toEqual({ ...none, scheduled: true });
    expect(await queue.releaseDue(500)).toBe(1);
    expect(await queue.probeDue()).toEqual({ ...none, queued: true });
    await queue.fanOut(500, 1000);

    // Time passes for the one that asked for an answer: its repeat, then its escalation.
    await setColumn(id, "next_repeat_at");
    expect((await queue.probeDue()).repeats).toBe(true);
    expect(await queue.repeatDue(500, 1)).toEqual([id]);
    expect((await queue.probeDue()).repeats).toBe(false);
    await setColumn(id, "escalate_at");
    expect((await queue.probeDue()).escalations).toBe(true);
    expect(await queue.escalateDue(500)).toBe(1);
    expect(await queue.probeDue()).toMatchObject({ escalations: false, queued: true });
    await queue.fanOut(500, 1000);

    await sql(
      server.databaseUrl,
      "insert into clear_push (notification_id, device_id) select notification_id, device_id from delivery where notification_id = $1",
      [id],
    );
    expect((await queue.probeDue()).clears).toBe(true);
    expect(await queue.claimClears(100)).toHaveLength(1);
    expect((await queue.probeDue()).clears).toBe(false);
  });

  it("is all an idle worker asks, and it still finds what another process committed", async () => {
    const calls = new Map<string, number>();
    const real = createDeliveryQueue(orm, 30);
    const queue = new Proxy(real, {
      get(target, name: string) {
        const value = target[name as keyof DeliveryQueue];
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.set(name, (calls.get(name) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown)(...args);
        };
      },
    });
    const fast = 10;
    const worker = new DeliveryWorker({
      queue,
      devices: new DeviceRepository(orm, testTokenKeys),
      tokenKeys: testTokenKeys,
      senders: new Map(),
      log: { debug() {}, info() {}, warn() {}, error() {} },
      ackIntervalScale: 1,
      clock: {
        ...workerClock,
        idlePoll: fast,
        releaseScheduled: fast,
        repeatUnacknowledged: fast,
        escalate: fast,
        sendClears: fast,
        claimRetries: fast,
      },
    });
    worker.start();
    try {
      // The first rounds, woken by nothing yet, run the statements and settle what the test
      // above left due; from then on, idle, the worker asks the probe alone.
      const statements = ["fanOut", "claimDue", "releaseDue", "repeatDue", "escalateDue"];
      const counts = () => statements.map((s) => `${s} ${calls.get(s) ?? 0}`);
      const probes = () => calls.get("probeDue") ?? 0;
      await waitFor(() => probes() >= 10, 10_000);
      const before = counts();
      await waitFor(() => probes() >= 40, 10_000);
      expect(probes()).toBeGreaterThanOrEqual(40);
      expect(counts()).toEqual(before);
      const id = await publish({ title: "from another process" });
      const settled = async () =>
        (
          await sql<{ n: number }>(
            server.databaseUrl,
            "select count(*)::int as n from delivery where notification_id = $1 and state <> 'pending'",
            [id],
          )
        )[0]?.n;
      await waitFor(async () => (await settled()) === 1, 10_000);
      expect(await settled()).toBe(1);
    } finally {
      await worker.stop();
    }
  });

  it("leaves a busy worker's rounds to look for this process's publishes at once", async () => {
    // The idle poll and every periodic job a minute apart: no probe runs after the first round,
    // so only the publish's own wake can send the worker to its fan-out.
    const minute = 60_000;
    const local = await startServer({
      fanOutAtCommit: 0,
      workerClock: {
        ...workerClock,
        idlePoll: minute,
        releaseScheduled: minute,
        repeatUnacknowledged: minute,
        escalate: minute,
        sendClears: minute,
        claimRetries: minute,
      },
    });
    try {
      const someone = await newAccount(local, "woken@example.com");
      await pushDevice(local, someone, "ios", { case: "pushToken", value: "cd".repeat(32) });
      for (const title of ["first", "second"]) {
        const r = await notify(local, { title }, { authorization: `Bearer ${someone.token}` });
        expect(r.status).toBe(202);
        const status = async () =>
          (
            await sql<{ status: string }>(
              local.databaseUrl,
              "select status from notification where id = $1",
              [r.json.id],
            )
          )[0]?.status;
        await waitFor(async () => (await status()) === "delivering", 3_000);
        expect(await status(), title).toBe("delivering");
      }
    } finally {
      await local.close();
    }
  });
});
