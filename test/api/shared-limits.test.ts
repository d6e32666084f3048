/**
 * The per-credential rate limit holds across processes (issue 11): three servers on one
 * database, one credential's requests spread over all three, admit what the one bucket allows
 * (within 10 %), not three times it; the failed-login throttle likewise; with
 * HERALD_RATE_LIMIT_SHARED=0 each process counts alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { notify, startPeer, startServer, type TestServer } from "../helpers/server.ts";

const limits = { rateLimitBurst: 60, rateLimitPerSecond: 1, loginFailuresPerAccount: 3 };
let a: TestServer;
const peers: { url: string; close(): Promise<void> }[] = [];
beforeAll(async () => {
  a = await startServer(limits);
  peers.push(await startPeer(a, limits), await startPeer(a, limits));
});
afterAll(async () => {
  for (const p of peers) await p.close();
  await a.close();
});

/** Publishes through `urls` in turn, `n` at a time, with one credential; counts the 202s. */
async function spread(urls: string[], total: number, key: string) {
  let accepted = 0;
  const started = Date.now();
  for (let i = 0; i < total; i += 15) {
    const batch = Array.from({ length: Math.min(15, total - i) }, (_, j) =>
      notify(
        { ...a, url: urls[(i + j) % urls.length] as string },
        { title: `s${i + j}` },
        {
          authorization: `Bearer ${key}`,
        },
      ),
    );
    accepted += (await Promise.all(batch)).filter((r) => r.status === 202).length;
  }
  return { accepted, seconds: (Date.now() - started) / 1000 };
}

describe("a credential's rate limit across three processes", () => {
  it("admits the one bucket's worth, within 10 %", async () => {
    const { accepted, seconds } = await spread([a.url, ...peers.map((p) => p.url)], 180, a.apiKey);
    const allowed = limits.rateLimitBurst + seconds * limits.rateLimitPerSecond;
    expect(accepted).toBeLessThanOrEqual(Math.ceil(allowed * 1.1));
    expect(accepted).toBeGreaterThanOrEqual(Math.floor(limits.rateLimitBurst * 0.9));
  });

  it("admits a burst's worth of concurrent requests on one process (they share the leases)", async () => {
    const b = await startServer(limits);
    try {
      const answers = await Promise.all(
        Array.from({ length: 70 }, (_, i) => notify(b, { title: `c${i}` })),
      );
      const accepted = answers.filter((r) => r.status === 202).length;
      expect(accepted).toBeGreaterThanOrEqual(60);
      expect(accepted).toBeLessThanOrEqual(62); // the burst, and at most a refill or two
      expect(answers.filter((r) => r.status === 429)).toHaveLength(70 - accepted);
    } finally {
      await b.close();
    }
  });

  it("stops password guessing after the account's failures, wherever they were tried", async () => {
    const urls = [a.url, ...peers.map((p) => p.url)];
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${urls[i % 3]}/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ email: "owner@example.com", password: `guess ${i}` }),
      });
      statuses.push(res.status);
    }
    // Three failures in all (one per process), then every process refuses: 429.
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
  });

  it("counts per process with HERALD_RATE_LIMIT_SHARED=0 (the contrast)", async () => {
    const own = { ...limits, rateLimitShared: false };
    const b = await startServer(own);
    const others = [await startPeer(b, own), await startPeer(b, own)];
    try {
      const { accepted } = await spread([b.url, ...others.map((p) => p.url)], 180, b.apiKey);
      expect(accepted).toBeGreaterThan(limits.rateLimitBurst * 2);
    } finally {
      for (const p of others) await p.close();
      await b.close();
    }
  });
});

describe("the monthly quota across three processes", () => {
  const quota = { monthlyQuota: 120, rateLimitBurst: 10_000, rateLimitPerSecond: 1_000 };

  it("accepts the quota, within 10 % and never more, however the publishes spread", async () => {
    const b = await startServer(quota);
    const others = [await startPeer(b, quota), await startPeer(b, quota)];
    try {
      const urls = [b.url, ...others.map((p) => p.url)];
      const { accepted } = await spread(urls, 200, b.apiKey);
      expect(accepted).toBeLessThanOrEqual(quota.monthlyQuota);
      expect(accepted).toBeGreaterThanOrEqual(quota.monthlyQuota * 0.9);
      const [row] = await sql<{ n: string }>(
        b.databaseUrl,
        "select count(*) as n from notification where project_id = $1",
        [b.projectId],
      );
      expect(Number(row?.n)).toBe(accepted);
      // Every process refuses now, each with 429 quota_exceeded.
      for (const url of urls) {
        const over = await notify({ ...b, url }, { title: "over" });
        expect(over.status).toBe(429);
        expect(over.json.code).toBe("quota_exceeded");
      }
    } finally {
      for (const p of others) await p.close();
      await b.close();
    }
  });

  it("gives unspent leases back when a process closes, for the others to use", async () => {
    const b = await startServer(quota);
    const peer = await startPeer(b, quota);
    try {
      // The peer leases a chunk (a sixteenth of what is left) for one publish, then closes.
      expect((await notify({ ...b, url: peer.url }, { title: "one" })).status).toBe(202);
      await peer.close();
      const [ledger] = await sql<{ leased: number }>(
        b.databaseUrl,
        "select leased from quota_ledger q join project p on p.account_id = q.account_id where p.id = $1",
        [b.projectId],
      );
      expect(ledger?.leased).toBe(1);
      const { accepted } = await spread([b.url], 150, b.apiKey);
      expect(accepted).toBe(quota.monthlyQuota - 1);
    } finally {
      await b.close();
    }
  });
});
