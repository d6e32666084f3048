/**
 * Noisy neighbours, outbound (issue 21, point 1): one account's receivers that trickle bytes
 * hold only that account's share of the webhook senders, never another account's deliveries;
 * a send has one deadline for the whole exchange; sends in flight are capped per endpoint and
 * per account.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultLimits } from "../../src/domain/limits.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import { addProjectWithKey, notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver } from "../helpers/webhook-receiver.ts";

/** A receiver that answers 200 at once, then one byte every 300 ms, never ending the body. */
async function startTrickler() {
  const open = new Map<string, number>();
  let now = 0;
  let most = 0;
  let mostPerEndpoint = 0;
  const closedAfterMs: number[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? "";
    const started = Date.now();
    open.set(path, (open.get(path) ?? 0) + 1);
    now += 1;
    most = Math.max(most, now);
    mostPerEndpoint = Math.max(mostPerEndpoint, open.get(path) ?? 0);
    req.resume();
    res.writeHead(200, { "content-type": "text/plain" });
    const drip = setInterval(() => res.write("."), 300);
    res.on("close", () => {
      clearInterval(drip);
      open.set(path, (open.get(path) ?? 1) - 1);
      now -= 1;
      closedAfterMs.push(Date.now() - started);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    stats: () => ({ now, most, mostPerEndpoint, closedAfterMs }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const deadlineMs = 3_000;
let server: TestServer;
let trickler: Awaited<ReturnType<typeof startTrickler>>;
let fast: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  server = await startServer({
    webhookAllowPrivate: true,
    limits: { ...defaultLimits, webhookDeadlineMs: deadlineMs },
  });
  trickler = await startTrickler();
  fast = await startWebhookReceiver();
});
afterAll(async () => {
  await server.close();
  await trickler.close();
  await fast.close();
});

async function call(key: string, path: string, payload?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: payload === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}` },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  return { status: res.status, json: (await body(res)) as JsonBody };
}

describe("an account whose receivers trickle bytes", () => {
  it("holds at most its share of the senders; another account's webhook arrives at once", async () => {
    const noisy = await addProjectWithKey(server, { newAccount: true });
    for (let i = 0; i < defaultLimits.webhooksPerProject; i++) {
      const r = await call(noisy.apiKey, "/v1/webhooks", {
        url: trickler.url(`e${i}`),
        event_types: ["notification.created"],
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    }
    // 6 events × 10 endpoints: 60 sends due at once, more than a process's 50 senders.
    for (let i = 0; i < 6; i++) {
      const r = await notify(
        server,
        { title: `noisy ${i}` },
        { authorization: `Bearer ${noisy.apiKey}` },
      );
      expect(r.status).toBe(202);
    }
    await waitFor(() => trickler.stats().now >= defaultLimits.webhooksInFlightPerAccount);

    const quiet = await call(server.apiKey, "/v1/webhooks", {
      url: fast.url,
      event_types: ["notification.created"],
    });
    expect(quiet.status).toBe(200);
    const published = Date.now();
    const sent = await notify(server, { title: "quiet neighbour" });
    expect(sent.status).toBe(202);
    await waitFor(() => fast.of("notification.created").length === 1, 5_000);
    expect(fast.of("notification.created")).toHaveLength(1);
    expect(Date.now() - published).toBeLessThan(2_000);

    // The caps held throughout, and every trickling send was cut at its deadline.
    await waitFor(() => trickler.stats().closedAfterMs.length >= 20, 3 * deadlineMs);
    const s = trickler.stats();
    expect(s.most).toBe(defaultLimits.webhooksInFlightPerAccount);
    expect(s.mostPerEndpoint).toBeLessThanOrEqual(defaultLimits.webhooksInFlightPerEndpoint);
    for (const ms of s.closedAfterMs) {
      expect(ms).toBeGreaterThanOrEqual(deadlineMs - 200);
      expect(ms).toBeLessThan(deadlineMs + 1_000);
    }
  }, 30_000);
});
