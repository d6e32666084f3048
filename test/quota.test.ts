import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body } from "./helpers/http.ts";
import { notify, startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ monthlyQuota: 3 });
});
afterAll(async () => server.close());

describe("the monthly quota", () => {
  it("refuses the publish past the quota with 429 quota_exceeded, still replays, reports usage", async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await notify(server, { title: `n${i}` }, { "idempotency-key": `q${i}` })).status,
      ).toBe(202);
    }
    const over = await notify(server, { title: "one too many" });
    expect(over.status).toBe(429);
    expect(over.json.code).toBe("quota_exceeded");
    const retry = Number(over.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(31 * 86400);
    // A retry of an earlier publish is not a new notification: it still gets its replay.
    const replay = await notify(server, { title: "n0" }, { "idempotency-key": "q0" });
    expect(replay.status).toBe(200);

    const usage = await body(
      await fetch(`${server.url}/v1/usage`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      }),
    );
    expect(usage).toMatchObject({ plan: "free", notifications_used: 3, notifications_quota: 3 });
    expect(Date.parse(usage.period_end)).toBeGreaterThan(Date.now());
  });
});
