/**
 * A stored push token whose key has left the key ring (HERALD_TOKEN_KEYS changed before
 * `npm run reencrypt-tokens` ran): its delivery fails with the reason, a clear to it is skipped
 * with a log line, the other devices are served, and nothing rejects unhandled (Vitest fails a
 * run on an unhandled rejection; in `npm start` it once ended the serving process).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";
import { newAccount, pushDevice, settled } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { apnsTestSenders, notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let apns: FakeApns;
let server: TestServer;
beforeAll(async () => {
  apns = await startFakeApns();
  server = await startServer({}, apnsTestSenders(apns));
});
afterAll(async () => {
  await server.close();
  await apns.close();
});

describe("a push token sealed under a key that is gone", () => {
  it("fails that delivery with the reason, serves the others, and clears without it", async () => {
    const account = await newAccount(server, "lost-key@example.com");
    const lostToken = "d1".padStart(64, "0");
    const goodToken = "d2".padStart(64, "0");
    const lost = await pushDevice(server, account, "ios", { case: "pushToken", value: lostToken });
    const good = await pushDevice(server, account, "ios", { case: "pushToken", value: goodToken });
    // The key its token was sealed with is no longer in the ring.
    await sql(server.databaseUrl, "update device set token_key_id = 'k0' where id = $1", [
      lost.deviceId,
    ]);

    const res = await notify(
      server,
      { title: "db down", require_ack: true },
      { authorization: `Bearer ${account.token}` },
    );
    const id = res.json.id as string;
    const n = await settled(server, account.token, id);
    const byDevice = new Map(
      (n.device_deliveries as { device_id: string; state: string; last_error: string }[]).map(
        (d) => [d.device_id, d],
      ),
    );
    expect(byDevice.get(lost.deviceId)).toMatchObject({
      state: "failed",
      last_error: "push token cannot be opened: token key k0 is not in the key ring",
    });
    expect(byDevice.get(good.deviceId)?.state).toBe("sent");
    expect(apns.received.filter((r) => r.token === goodToken)).toHaveLength(1);
    // The device is kept: the key may come back into the ring.
    const [row] = await sql(server.databaseUrl, "select enabled from device where id = $1", [
      lost.deviceId,
    ]);
    expect(row).toMatchObject({ enabled: true });

    // Acknowledged on the good phone: the lost one's clear cannot be opened, and is skipped.
    const ack = await fetch(`${server.url}/v1/inbox/${id}/ack`, {
      method: "POST",
      headers: { authorization: `Bearer ${good.credential}`, "content-type": "application/json" },
      body: JSON.stringify({ acknowledge: true }),
    });
    expect(ack.status).toBe(200);
    await waitFor(async () => {
      const left = await sql(
        server.databaseUrl,
        "select 1 from clear_push where notification_id = $1",
        [id],
      );
      return left.length === 0;
    });
    expect(apns.received.filter((r) => r.token === lostToken)).toEqual([]);

    // Still serving.
    const after = await notify(
      server,
      { title: "still here" },
      { authorization: `Bearer ${account.token}` },
    );
    expect(after.status).toBe(202);
  });
});
