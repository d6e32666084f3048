/**
 * The fan-out at commit (issue 24): a group-committed publish that reaches at most
 * HERALD_FAN_OUT_AT_COMMIT devices is committed with its deliveries, `delivering` (or
 * `no_devices`), with no worker involved; one that reaches more is committed `queued` for the
 * workers' fan-out, and so is what a batch holds past its share (20 publishes' worth of
 * deliveries). Here no process runs a worker until the last test starts one, so whatever exists
 * when a 202 arrives was made by the publish's own commit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { inOneBatch, installInsertHook, xminsOf } from "../helpers/held-batch.ts";
import { notify, startPeer, startServer, type TestServer } from "../helpers/server.ts";
import { withStreamDevices } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

const perPublish = 2;
let server: TestServer;
/** Accounts with 2 devices (within the bound), 3 (past it) and none. */
let few: TestAccount;
let many: TestAccount;
let none: TestAccount;

const withDevices = async (email: string, count: number) =>
  (await withStreamDevices(server, email, count)).account;

beforeAll(async () => {
  server = await startServer({
    workerEnabled: false,
    groupCommitSlots: 1,
    fanOutAtCommit: perPublish,
  });
  await installInsertHook(server.databaseUrl);
  few = await withDevices("few@example.com", 2);
  many = await withDevices("many@example.com", 3);
  none = await withDevices("none@example.com", 0);
});
afterAll(async () => server.close());

const publish = async (account: TestAccount, title: string) => {
  const r = await notify(server, { title }, { authorization: `Bearer ${account.token}` });
  expect(r.status).toBe(202);
  return r.json.id as string;
};

/** Each title's notification status and how many deliveries it has. */
const stored = (titles: string[]) =>
  sql<{ title: string; status: string; deliveries: number }>(
    server.databaseUrl,
    `select n.title, n.status, (select count(*)::int from delivery d where d.notification_id = n.id) as deliveries
       from notification n where n.title = any($1) order by n.title`,
    [titles],
  );

describe("a publish fanned out at its commit", () => {
  it("is committed with its deliveries when it reaches few devices; one reaching more waits queued", async () => {
    await publish(few, "to two devices");
    await publish(many, "to three devices");
    await publish(none, "to no device");
    expect(await stored(["to two devices", "to three devices", "to no device"])).toEqual([
      { title: "to no device", status: "no_devices", deliveries: 0 },
      { title: "to three devices", status: "queued", deliveries: 0 },
      { title: "to two devices", status: "delivering", deliveries: 2 },
    ]);
  });

  it("makes at most 20 publishes' worth of deliveries in one batch, and leaves the rest to a worker", async () => {
    // One slot, held until the 25 sent meanwhile wait too: they form the next batch.
    const titles = Array.from({ length: 25 }, (_, i) => `batched ${String(i).padStart(2, "0")}`);
    const { held, sent } = await inOneBatch(
      server,
      () => publish(none, "hold"),
      25,
      () => Promise.all(titles.map((title) => publish(few, title))),
    );
    await Promise.all([sent, held]);
    expect(await xminsOf(server.databaseUrl, titles)).toEqual([
      expect.objectContaining({ n: "25" }),
    ]);
    const rows = await stored(titles);
    const count = (status: string) => rows.filter((r) => r.status === status).length;
    expect([count("delivering"), count("queued")]).toEqual([20, 5]);
    expect(rows.filter((r) => r.status === "delivering").every((r) => r.deliveries === 2)).toBe(
      true,
    );

    // A worker fans out what was left: every publish reaches both devices, none twice.
    const worker = await startPeer(server);
    try {
      await waitFor(async () => (await stored(titles)).every((r) => r.status !== "queued"));
      expect((await stored(titles)).map((r) => r.deliveries)).toEqual(titles.map(() => 2));
    } finally {
      await worker.close();
    }
  });
});
