import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultLimits } from "../../src/domain/limits.ts";
import {
  addProjectWithKey,
  notify,
  startPeer,
  startServer,
  type TestServer,
} from "../helpers/server.ts";

let server: TestServer;
let accounts: TestServer;
beforeAll(async () => {
  // A refill of 1/s, so that a slow machine (CI) cannot refill a token while the burst is sent.
  server = await startServer({
    rateLimitBurst: 5,
    rateLimitPerSecond: 1,
    limits: { ...defaultLimits, accountRequestBurst: 1_000 },
  });
  // The defaults: 60 per credential, 120 per account (refilled 20/s).
  accounts = await startServer({
    rateLimitBurst: 60,
    rateLimitPerSecond: 10,
    limits: defaultLimits,
  });
});
afterAll(async () => Promise.all([server.close(), accounts.close()]));

const policy = '"credential";q=5;w=5, "account";q=1000;w=50';

describe("the per-credential token bucket", () => {
  it("answers 429 past the burst, with Retry-After and RateLimit headers, then refills", async () => {
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await notify(server, { title: `burst ${i}` }));
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 429, 429]);
    expect(results[0]?.headers.get("ratelimit-policy")).toBe(policy);
    expect(results[0]?.headers.get("ratelimit")).toMatch(/^"credential";r=4;t=\d+$/);
    const limited = results[5];
    expect(limited?.json.code).toBe("rate_limited");
    expect(limited?.headers.get("retry-after")).toBe("1");
    expect(limited?.headers.get("ratelimit")).toMatch(/^"credential";r=0;t=1$/);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await notify(server, { title: "after refill" })).status).toBe(202);
  });
  it("also limits invalid requests, and tells the limit on them", async () => {
    await new Promise((r) => setTimeout(r, 1100));
    const res = await notify(server, { title: "" });
    expect(res.status).toBe(400);
    expect(res.headers.get("ratelimit-policy")).toBe(policy);
  });
});

describe("the per-account token bucket", () => {
  it("holds 20 keys of one account, on two processes, to the account's limit", async () => {
    const peer = await startPeer(accounts, {
      rateLimitBurst: 60,
      rateLimitPerSecond: 10,
      limits: defaultLimits,
    });
    try {
      const keys = [accounts.apiKey];
      for (let i = 1; i < 20; i++) {
        keys.push((await addProjectWithKey(accounts, { name: `p${i}` })).apiKey);
      }
      const started = Date.now();
      const answers = await Promise.all(
        keys.flatMap((key, k) =>
          Array.from({ length: 60 }, (_, i) =>
            notify(
              { ...accounts, url: k % 2 === 0 ? accounts.url : peer.url },
              { title: `k${k} ${i}` },
              { authorization: `Bearer ${key}` },
            ),
          ),
        ),
      );
      const seconds = (Date.now() - started) / 1000;
      const accepted = answers.filter((a) => a.status === 202).length;
      const limit =
        defaultLimits.accountRequestBurst + defaultLimits.accountRequestsPerSecond * seconds;
      expect(accepted).toBeGreaterThanOrEqual(defaultLimits.accountRequestBurst * 0.9);
      expect(accepted).toBeLessThanOrEqual(limit * 1.1);
      const refused = answers.find((a) => a.status === 429);
      expect(refused?.json.detail).toMatch(
        /the account's rate limit of 120 requests, refilled at 20\/s/,
      );
      expect(refused?.headers.get("ratelimit")).toMatch(/^"account";r=0;/);
    } finally {
      await peer.close();
    }
  }, 30_000);
});
