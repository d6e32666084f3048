/**
 * The Node SDK against a real server: typed notify, get, list and iteration, typed errors, a
 * retry after the first answer was lost on the way back, yielding exactly one notification, and
 * a question withdrawn when its asker stopped while it was being published.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Herald, HeraldError } from "../../src/sdk/index.ts";
import { sql } from "../helpers/db.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

/**
 * Forwards to the server; the first connection's answer is swallowed and the socket cut. Given
 * `onFirstAnswer`, that answer is passed on instead, just after the call (whose request the
 * server has then processed).
 */
async function lossyProxy(
  target: number,
  onFirstAnswer?: () => void,
): Promise<{ url: string; close(): Promise<void> }> {
  let first = true;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    sockets.add(client);
    const upstream = net.connect(target, "127.0.0.1");
    sockets.add(upstream);
    const lose = first && !onFirstAnswer;
    first = false;
    client.pipe(upstream);
    upstream.on("data", (chunk) => {
      if (lose) {
        // The request reached the server and was processed; its answer never arrives.
        client.destroy();
        upstream.destroy();
        return;
      }
      // Told once, before the first answer's first byte passes; then everything passes.
      onFirstAnswer?.();
      onFirstAnswer = undefined;
      client.write(chunk);
    });
    upstream.on("end", () => client.end());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => r());
      }),
  };
}

describe("the SDK", () => {
  it.each(["connect", "grpc"] as const)("publishes, reads and lists over %s", async (transport) => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url, transport });
    const n = await herald.notify({
      title: `via ${transport}`,
      topic: "sdk",
      priority: "high",
      metadata: { run: 1 },
    });
    expect(n).toMatchObject({
      title: `via ${transport}`,
      topic: "sdk",
      priority: "high",
      metadata: { run: 1 },
    });
    expect((await herald.getNotification(n.id)).id).toBe(n.id);
    const page = await herald.listNotifications({ topic: "sdk" });
    expect(page.notifications.map((x) => x.id)).toContain(n.id);
  });

  it("iterates every page", async () => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url });
    for (let i = 0; i < 5; i++) await herald.notify({ title: `page ${i}`, topic: "pages" });
    const titles: string[] = [];
    for await (const n of herald.notifications({ topic: "pages", pageSize: 2 }))
      titles.push(n.title);
    expect(titles).toEqual(["page 4", "page 3", "page 2", "page 1", "page 0"]);
  });

  it("schedules a notification and cancels it", async () => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url });
    const n = await herald.notify({ title: "later", delaySeconds: 300 });
    expect(n.status).toBe("scheduled");
    expect(n.deliverAt).toBeDefined();
    const canceled = await herald.cancelNotification(n.id);
    expect(canceled.status).toBe("canceled");
    expect((await herald.getNotification(n.id)).status).toBe("canceled");
    const bad = (await herald
      .notify({ title: "when?", deliverAt: "next tuesday" })
      .catch((e: unknown) => e)) as HeraldError;
    expect(bad).toMatchObject({ code: "invalid_argument" });
    expect(bad.violations.map((v) => v.field)).toEqual(["deliver_at"]);
  });

  it("throws one typed error with the stable code, the violations and the request id", async () => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url });
    const err = await herald
      .notify({ title: "x".repeat(121), ttlSeconds: 5 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    const he = err as HeraldError;
    expect(he).toMatchObject({ code: "invalid_argument", status: 400 });
    expect(he.violations.map((v) => v.field).sort()).toEqual(["title", "ttl_seconds"]);
    expect(he.requestId).toMatch(/^req_/);
    const denied = await new Herald({ apiKey: `hk_${"a".repeat(38)}`, baseUrl: server.url })
      .notify({ title: "x" })
      .catch((e: unknown) => e as HeraldError);
    expect(denied).toMatchObject({ code: "unauthenticated", status: 401 });
  });

  it("retries a lost response with the same idempotency key: exactly one notification", async () => {
    const proxy = await lossyProxy(server.port);
    try {
      const herald = new Herald({ apiKey: server.apiKey, baseUrl: proxy.url, maxRetries: 3 });
      const n = await herald.notify({ title: "lost on the way back", topic: "lossy" });
      expect(n.title).toBe("lost on the way back");
      const rows = await sql<{ n: number }>(
        server.databaseUrl,
        "select count(*)::int as n from notification where topic = 'lossy'",
      );
      expect(rows[0]?.n).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("withdraws a question whose asker stopped while it was being published", async () => {
    const stop = new AbortController();
    // Stopped once the server has committed the question, before its answer reaches the asker.
    const proxy = await lossyProxy(server.port, () => stop.abort(new Error("stopped")));
    try {
      const herald = new Herald({ apiKey: server.apiKey, baseUrl: proxy.url });
      const asked = herald.ask(
        {
          title: "Restart db-3?",
          topic: "stopped-early",
          actions: [{ id: "yes", label: "Restart" }],
        },
        { signal: stop.signal },
      );
      await expect(asked).rejects.toThrow("stopped");
      // Withdrawn, not left on the devices to be answered into nothing.
      const rows = await sql<{ status: string }>(
        server.databaseUrl,
        "select status from notification where topic = 'stopped-early'",
      );
      expect(rows).toEqual([{ status: "canceled" }]);
    } finally {
      await proxy.close();
    }
  });

  it("refuses a server URL without its scheme at once, where each call failed after its retries", () => {
    const made = () => new Herald({ apiKey: server.apiKey, baseUrl: "herald.example.com" });
    expect(made).toThrow(HeraldError);
    expect(made).toThrow(
      'baseUrl is "herald.example.com", not a server\'s URL: give it whole, as https://herald.example.com',
    );
  });

  it("does not retry what cannot succeed", async () => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url });
    await herald.notify({ title: "a" }, { idempotencyKey: "sdk-reuse" });
    const err = await herald
      .notify({ title: "b" }, { idempotencyKey: "sdk-reuse" })
      .catch((e: unknown) => e as HeraldError);
    expect(err).toMatchObject({ code: "idempotency_key_reused", status: 422 });
  });
});

describe("the SDK over gRPC", () => {
  it("reports the request id once, not doubled", async () => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url, transport: "grpc" });
    const err = await herald.notify({ title: "" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    expect((err as HeraldError).requestId).toMatch(/^req_[\w-]+$/);
  });
  it("types priority as low, normal or high", () => {
    const herald = new Herald({ apiKey: server.apiKey, baseUrl: server.url });
    // @ts-expect-error: "urgent" is not a priority (npm run typecheck fails if this compiles)
    const wrong: Parameters<typeof herald.notify>[0] = { title: "t", priority: "urgent" };
    expect(wrong.priority).toBe("urgent");
  });
});
