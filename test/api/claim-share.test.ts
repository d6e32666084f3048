/**
 * The claim of due pushes (issue 24): an account gets at most the rest of its share of the
 * worker's sends, and half its share at most in one claim, so that the worker's next claim can
 * run while this one's sends are being started and still find work for a busy account. Another
 * account's pushes are claimed alongside, each by its own count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryQueue } from "../../src/db/deliveries/queue.ts";
import { type Orm, openDatabase } from "../../src/db/orm.ts";
import { newAccount, pushDevice, type TestAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let orm: Orm;

beforeAll(async () => {
  // No worker and no fan-out at commit: the test fans out and claims itself.
  server = await startServer({ workerEnabled: false, fanOutAtCommit: 0 });
  orm = await openDatabase({ url: server.databaseUrl, poolSize: 2 });
});
afterAll(async () => {
  await orm.close();
  await server.close();
});

/** An account with `phones` iOS devices, its id, and one notification published to them. */
async function withPhones(email: string, phones: number) {
  const account: TestAccount = await newAccount(server, email);
  for (let i = 0; i < phones; i++) {
    const token = `${email.length.toString(16)}${i.toString(16)}`.padEnd(64, "c");
    await pushDevice(server, account, "ios", { case: "pushToken", value: token });
  }
  const r = await notify(
    server,
    { title: "to every phone" },
    { authorization: `Bearer ${account.token}` },
  );
  expect(r.status).toBe(202);
  const [row] = await sql<{ account_id: string }>(
    server.databaseUrl,
    "select account_id from notification n join project p on p.id = n.project_id where n.id = $1",
    [r.json.id],
  );
  return row?.account_id as string;
}

describe("the claim of due pushes", () => {
  it("gives an account half its share at most, and no more than the rest of it", async () => {
    const busyOne = await withPhones("nine-phones@example.com", 9);
    const other = await withPhones("three-phones@example.com", 3);
    const queue = createDeliveryQueue(orm, 30);
    while ((await queue.fanOut(500, 1000)).more) {}
    const perAccount = 4;
    const claim = async (busy: Map<string, number>) => {
      const got = await queue.claimDue(100, { perAccount, busy });
      const of = (account: string) => got.filter((d) => d.account_id === account).length;
      return [of(busyOne), of(other)];
    };
    // Nothing in flight: half the share of each (2), though 9 and 3 are due.
    expect(await claim(new Map())).toEqual([2, 2]);
    // Three of the busy account's in flight: the one left of its share; the other, its half.
    expect(await claim(new Map([[busyOne, 3]]))).toEqual([1, 1]);
    // At its share: none of it; what is left of the other's (3 phones, 3 claimed) is nothing.
    expect(await claim(new Map([[busyOne, 4]]))).toEqual([0, 0]);
    // Claimed rows are leased: what remains due is 9 - 3 of the busy account's.
    expect(await claim(new Map())).toEqual([2, 0]);
  });
});
