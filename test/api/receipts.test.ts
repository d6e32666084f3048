/**
 * Receipts of several notifications at once (InboxService.ConfirmReceipts, REST
 * `POST /v1/inbox/receipts`): each delivery to the calling device becomes `delivered` in one
 * call; ids not delivered to it (another account's, none at all) come back in `unknown_ids` and
 * change nothing; a state already further on (`opened`) stays; the ids are checked, 1..300
 * uuids, each once; only a device may call it.
 */
import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import type { TestAccount } from "../helpers/accounts.ts";
import { body, deviceDeliveries } from "../helpers/http.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { bearer, withStreamDevices } from "../helpers/streams.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const inbox = () =>
  createClient(InboxService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));

async function publish(account: TestAccount, title: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.token}` },
    body: JSON.stringify({ title }),
  });
  expect(res.status).toBe(202);
  return (await body(res)).id as string;
}

const stateOf = async (account: TestAccount, id: string) =>
  (await deviceDeliveries(server.url, account.token, id)).map((d) => d.state);

const receipts = (credential: string, payload: unknown) =>
  fetch(`${server.url}/v1/inbox/receipts`, {
    method: "POST",
    headers: bearer(credential).headers,
    body: JSON.stringify(payload),
  });

describe("ConfirmReceipts", () => {
  it("marks the device's deliveries delivered in one call, and names the ids that are not its own", async () => {
    const a = await withStreamDevices(server, "receipts-a@example.com", 1);
    const b = await withStreamDevices(server, "receipts-b@example.com", 1);
    const device = a.devices[0] as { credential: string; id: string };
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await publish(a.account, `backlog ${i}`));
    const theirs = await publish(b.account, "another account's");
    const nobodys = randomUUID();
    for (const id of mine) expect(await stateOf(a.account, id)).toEqual(["pending"]);
    // One opened already: a receipt does not take it back.
    await inbox().markOpened({ id: mine[2] as string }, bearer(device.credential));

    const res = await inbox().confirmReceipts(
      { ids: [...mine, theirs, nobodys] },
      bearer(device.credential),
    );
    expect([...res.unknownIds].sort()).toEqual([theirs, nobodys].sort());
    expect(await stateOf(a.account, mine[0] as string)).toEqual(["delivered"]);
    expect(await stateOf(a.account, mine[1] as string)).toEqual(["delivered"]);
    expect(await stateOf(a.account, mine[2] as string)).toEqual(["opened"]);
    expect(await stateOf(b.account, theirs)).toEqual(["pending"]);

    // Over REST, the same; again, nothing changes.
    const rest = await receipts(device.credential, { ids: mine });
    expect(rest.status).toBe(200);
    expect((await body(rest)).unknown_ids ?? []).toEqual([]);
    expect(await stateOf(a.account, mine[2] as string)).toEqual(["opened"]);
  });

  it("refuses ids that are not 1..300 uuids each once, naming the field, and a caller that is no device", async () => {
    const { account, devices } = await withStreamDevices(server, "receipts-c@example.com", 1);
    const credential = (devices[0] as { credential: string }).credential;
    const uuids = (n: number) => Array.from({ length: n }, () => randomUUID());
    const one = randomUUID();
    for (const [ids, field] of [
      [[], "ids"],
      [uuids(301), "ids"],
      [[one, one], "ids"],
      [["not-a-uuid"], "ids[0]"],
    ] as const) {
      const res = await receipts(credential, { ids });
      expect(res.status).toBe(400);
      const problem = await body(res);
      expect(problem.code).toBe("invalid_argument");
      expect(problem.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    expect((await receipts(credential, { ids: uuids(300) })).status).toBe(200);
    // A POST with no body at all is an empty request (`curl -X POST`): here, no ids.
    const empty = await fetch(`${server.url}/v1/inbox/receipts`, {
      method: "POST",
      headers: bearer(credential).headers,
    });
    expect(empty.status).toBe(400);
    expect((await body(empty)).errors.map((e: { field: string }) => e.field)).toEqual(["ids"]);
    // The account's CLI token is no device: it has no deliveries to confirm.
    const token = await receipts(account.token, { ids: [one] });
    expect(token.status).toBe(403);
    expect((await body(token)).code).toBe("permission_denied");
  });
});
