/**
 * Streams and long polls are counted in every process, and only while their process lives: a
 * process that dies (its beat lapses) stops holding its devices' places, so devices reconnecting
 * after a crash are not refused for streams that died with it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenCallRepository } from "../../src/db/repositories/open-calls.ts";
import { publicError } from "../../src/errors.ts";
import { sql } from "../helpers/db.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

const cap = { limit: "streamsPerAccount" as const, value: 10 };
const perDevice = (id: string) => ({ id, cap: { limit: "streamsPerDevice" as const, value: 1 } });

describe("open calls", () => {
  it("count across processes, and stop counting when their process's beat lapses", async () => {
    const device = crypto.randomUUID();
    const crashed = new OpenCallRepository(server.orm);
    const other = new OpenCallRepository(server.orm);
    await crashed.open("stream", server.accountId, cap, perDevice(device));
    // Another process: the device's one place is taken.
    const refused = await other
      .open("stream", server.accountId, cap, perDevice(device))
      .catch((e: unknown) => publicError(e));
    expect(refused).toMatchObject({ code: "limit_exceeded", info: { limit: "streamsPerDevice" } });
    // The first process dies without a word: its beat lapses (5 s after its last).
    await crashed.close(); // stops its timer; its row is deleted like a lapse would make it void
    const [{ n }] = (await sql<{ n: string }>(
      server.databaseUrl,
      "select count(*) n from open_call where device_id = $1",
      [device],
    )) as [{ n: string }];
    expect(Number(n)).toBe(1); // its call's row is still there, but no longer counts
    const call = await other.open("stream", server.accountId, cap, perDevice(device));
    await call.close();
    await other.close();
  });

  it("a lapsed beat alone (no goodbye) frees the place", async () => {
    const device = crypto.randomUUID();
    const hung = new OpenCallRepository(server.orm);
    const other = new OpenCallRepository(server.orm);
    await hung.open("stream", server.accountId, cap, perDevice(device));
    // As 5 s without a beat would leave it.
    await sql(
      server.databaseUrl,
      `update serving_process set alive_until = now() - interval '1 second'
        where id = (select process_id from open_call where device_id = $1)`,
      [device],
    );
    const call = await other.open("stream", server.accountId, cap, perDevice(device));
    await call.close();
    await other.close();
  });
});
