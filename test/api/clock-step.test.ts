/**
 * The wall clock stepped back an hour while Herald runs (NTP correcting a clock that was ahead
 * at boot, a virtual machine resumed): scheduled notifications are still released, busy keys
 * are still served, and a failed password counts in a minute's window. Before, every time since
 * something measured with `Date.now()` was negative for that hour: the delivery worker's
 * periodic jobs waited an hour, each key's rate bucket owed an hour of tokens (429 for an hour),
 * and a failed-authentication window ended an hour late; and notifications published after the
 * step sorted before those of the hour before it.
 *
 * The server runs in this process, whose `Date` is replaced (before the servers start) by one
 * that can be stepped back, so every part of Herald reads the stepped clock. PostgreSQL's
 * `now()` cannot be stepped here: the state a step leaves in its rows (a bucket or a window
 * updated "in the future") is written directly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const RealDate = Date;
let behindMs = 0;
/** The wall clock, `behindMs` behind the real one; dates given a time are left alone. */
class SteppedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(RealDate.now() - behindMs);
    else super(...(args as [string]));
  }
  static override now(): number {
    return RealDate.now() - behindMs;
  }
}
const hour = 3_600_000;
const stepBack = (ms: number) => {
  behindMs += ms;
};

let server: TestServer;
beforeAll(async () => {
  globalThis.Date = SteppedDate as DateConstructor;
  // Leases of one token (a twentieth of the burst), so that each publish asks PostgreSQL.
  server = await startServer({ rateLimitBurst: 20, rateLimitPerSecond: 100 });
});
afterAll(async () => {
  await server.close();
  globalThis.Date = RealDate;
});

const status = async (s: TestServer, id: string) =>
  (
    await body(
      await fetch(`${s.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${s.apiKey}` },
      }),
    )
  ).status as string;

describe("the wall clock stepped back an hour", () => {
  it("still releases a scheduled notification at its time", async () => {
    const res = await notify(server, { title: "later", delay_seconds: 1 });
    expect(res.json.status).toBe("scheduled");
    stepBack(hour);
    // Its time is PostgreSQL's (not stepped): due a second from the publish, then fanned out
    // to no device.
    await waitFor(async () => (await status(server, res.json.id)) === "no_devices", 5_000);
    expect(await status(server, res.json.id)).toBe("no_devices");
  });

  it("serves a key whose shared bucket was last refilled 'in the future'", async () => {
    expect((await notify(server, { title: "before" })).status).toBe(202);
    // What a step back of PostgreSQL's clock leaves: buckets updated an hour ahead of now().
    await sql(
      server.databaseUrl,
      "update rate_bucket set updated_at = now() + interval '1 hour', tokens = 5",
    );
    const res = await notify(server, { title: "after" });
    expect(res.status).toBe(202);
  });

  it("serves a key of this process's own buckets", async () => {
    const own = await startServer({
      rateLimitShared: false,
      rateLimitBurst: 20,
      rateLimitPerSecond: 100,
    });
    try {
      expect((await notify(own, { title: "before" })).status).toBe(202);
      stepBack(hour);
      const res = await notify(own, { title: "after" });
      expect(res.status).toBe(202);
    } finally {
      await own.close();
    }
  });

  it("lists a notification published after the step before those published in the hour before", async () => {
    await notify(server, { title: "before the step", topic: "stepped" });
    stepBack(hour);
    await notify(server, { title: "after the step", topic: "stepped" });
    const list = await body(
      await fetch(`${server.url}/v1/notifications?topic=stepped`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      }),
    );
    // Newest first, by id: the later one's id keeps the last id's time (src/domain/ids.ts).
    expect(list.notifications.map((n: { title: string }) => n.title)).toEqual([
      "after the step",
      "before the step",
    ]);
  });

  it("counts a failed authentication in a new minute, not an hour-long one", async () => {
    const bad = () => notify({ ...server, apiKey: "hk_live_not-a-key" }, { title: "x" });
    expect((await bad()).status).toBe(401);
    // A window that started an hour ahead of now(), already at the limit.
    await sql(
      server.databaseUrl,
      `update rate_bucket set updated_at = now() + interval '1 hour', granted = 1000000
        where key like 'auth-fail:%'`,
    );
    expect((await bad()).status).toBe(401);
    const again = await bad();
    expect(again.status).toBe(401);
    expect(again.headers.get("retry-after")).toBeNull();
  });
});
