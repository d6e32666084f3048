import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  // A refill of 1/s, so that a slow machine (CI) cannot refill a token while the burst is sent.
  server = await startServer({ rateLimitBurst: 5, rateLimitPerSecond: 1 });
});
afterAll(async () => server.close());

describe("the per-credential token bucket", () => {
  it("answers 429 past the burst, with Retry-After and RateLimit headers, then refills", async () => {
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await notify(server, { title: `burst ${i}` }));
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 429, 429]);
    expect(results[0]?.headers.get("ratelimit-policy")).toBe('"credential";q=5;w=5');
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
    expect(res.headers.get("ratelimit-policy")).toBe('"credential";q=5;w=5');
  });
});
