/**
 * A fan-out to thousands of devices refreshes the delivery table's planner statistics
 * (`queue.analyze`, at most once a minute per worker). Until autovacuum looked again, the
 * planner believed a handful of deliveries were due, and every claim of the fan-out joined all of
 * them to their devices and sorted them (15-20 ms for 10,000, more for more) instead of reading
 * 500 in index order (BENCHMARKS.md, issue 24). Devices are written straight to the table, their
 * tokens sealed as Herald seals them: an account signs in at most 50 through the API.
 */
import { describe, expect, it } from "vitest";
import { digestCredential, displayPrefix, mintCredential } from "../../src/domain/credentials.ts";
import { uuidv7 } from "../../src/domain/ids.ts";
import { sql } from "../helpers/db.ts";
import { notify, serverWithFakeApns, testTokenKeys } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const devices = 2_100;
const started = serverWithFakeApns();

async function addPhones(count: number): Promise<void> {
  const { server } = started;
  const rows = Array.from({ length: count }, (_, i) => {
    const id = uuidv7();
    const token = (i + 1).toString(16).padStart(64, "0");
    const credential = mintCredential("device");
    const sealed = testTokenKeys.seal(token, id);
    return [
      id,
      `phone ${i}`,
      digestCredential(credential),
      displayPrefix(credential),
      sealed.keyId,
      sealed.box,
      testTokenKeys.blindIndex("ios", token),
      token.slice(-4),
    ];
  });
  const column = (c: number) => rows.map((r) => r[c]);
  await sql(
    server.databaseUrl,
    `insert into device (id, account_id, name, platform, credential_digest, credential_prefix,
                         token_key_id, token_box, token_index, token_last4, topics)
     select id, $9, name, 'ios', digest, prefix, key_id, box, idx, last4, '{statistics}'
       from unnest($1::uuid[], $2::text[], $3::bytea[], $4::text[], $5::text[], $6::bytea[],
                   $7::bytea[], $8::text[]) as t(id, name, digest, prefix, key_id, box, idx, last4)`,
    [...Array.from({ length: 8 }, (_, c) => column(c)), server.accountId],
  );
}

const analyzed = async () =>
  Number(
    (
      await sql<{ n: string }>(
        started.server.databaseUrl,
        "select analyze_count as n from pg_stat_user_tables where relname = 'delivery'",
      )
    )[0]?.n ?? 0,
  );

describe("a fan-out to thousands of devices", () => {
  it("refreshes the delivery table's statistics, and every copy is sent", async () => {
    const { server, apns } = started;
    await addPhones(devices);
    const before = await analyzed();
    const r = await notify(
      server,
      { title: "to every phone", topic: "statistics" },
      { authorization: `Bearer ${server.apiKey}` },
    );
    expect(r.status).toBe(202);
    await waitFor(() => apns.received.length >= devices, 60_000);
    expect(apns.received).toHaveLength(devices);
    await waitFor(async () => (await analyzed()) > before, 10_000);
    expect(await analyzed()).toBeGreaterThan(before);
    const sent = async () =>
      (
        await sql<{ n: number }>(
          server.databaseUrl,
          "select count(*)::int as n from delivery where state = 'sent' and platform = 'ios'",
        )
      )[0]?.n;
    await waitFor(async () => (await sent()) === devices, 10_000);
    expect(await sent()).toBe(devices);
  }, 90_000);
});
