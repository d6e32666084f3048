/**
 * Failed authentication is throttled per client address (issue 21, point 3): unknown keys and
 * tokens, wrong pairing codes and unknown device codes all count; past the limit the address
 * gets 429 with Retry-After until the minute ends, answered without a database lookup; the
 * count is shared by the processes on one database.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { mintCredential } from "../../src/domain/credentials.ts";
import { defaultLimits } from "../../src/domain/limits.ts";
import { body } from "../helpers/http.ts";
import { startPeer, startServer, type TestServer } from "../helpers/server.ts";
import { startDatabaseProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const limit = 5;
const settings = {
  trustProxy: "127.0.0.1",
  credentialCacheMs: 0,
  limits: { ...defaultLimits, failedAuthPerMinute: limit },
};
let proxy: TcpProxy;
let server: TestServer;
let peer: { url: string; close(): Promise<void> };
beforeAll(async () => {
  const db = await startDatabaseProxy(inject("pgServerUrl"));
  proxy = db;
  server = await startServer(settings, undefined, db.through);
  peer = await startPeer(server, settings);
});
afterAll(async () => {
  await proxy.up().catch(() => {});
  await peer.close();
  await server.close();
  await proxy.close();
});

let clients = 0;
/** A client address of its own (the server trusts the test as its proxy). */
const newClient = () => `198.51.100.${++clients}`;

async function post(base: string, path: string, from: string, payload: unknown, key?: string) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      "x-forwarded-for": from,
      "content-type": "application/json",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify(payload),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: await body(res) };
}

const publishWith = (base: string, from: string, key: string) =>
  post(base, "/v1/notify", from, { title: "hello" }, key);

describe("failed authentication", () => {
  it("is answered 429 past the limit, until the minute ends, even for a good key", async () => {
    const from = newClient();
    for (let i = 0; i < limit; i++) {
      expect((await publishWith(server.url, from, mintCredential("apiKey"))).status).toBe(401);
    }
    const throttled = await publishWith(server.url, from, mintCredential("apiKey"));
    expect(throttled.status).toBe(429);
    expect(throttled.json).toMatchObject({ code: "rate_limited" });
    expect(Number(throttled.retryAfter)).toBeGreaterThan(50);
    expect(Number(throttled.retryAfter)).toBeLessThanOrEqual(60);
    expect((await publishWith(server.url, from, server.apiKey)).status).toBe(429);
    // Another address is not throttled.
    expect((await publishWith(server.url, newClient(), server.apiKey)).status).toBe(202);
  });

  it("costs no database lookup once throttled: answered while the database is unreachable", async () => {
    const from = newClient();
    for (let i = 0; i < limit; i++) await publishWith(server.url, from, mintCredential("cliToken"));
    await proxy.down();
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => publishWith(server.url, from, mintCredential("apiKey"))),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(429));
      // A lookup would have met the outage: another address is told so.
      expect((await publishWith(server.url, newClient(), mintCredential("apiKey"))).status).toBe(
        503,
      );
    } finally {
      await proxy.up();
    }
  });

  it("is counted across the processes on one database", async () => {
    const from = newClient();
    for (let i = 0; i < 3; i++) await publishWith(server.url, from, mintCredential("apiKey"));
    for (let i = 0; i < 2; i++) {
      expect((await publishWith(peer.url, from, mintCredential("apiKey"))).status).toBe(401);
    }
    expect((await publishWith(peer.url, from, mintCredential("apiKey"))).status).toBe(429);
  });

  it("counts wrong pairing codes and unknown device codes", async () => {
    const pairing = newClient();
    for (let i = 0; i < limit; i++) {
      const r = await post(server.url, "/v1/devices/sign-in", pairing, {
        name: "phone",
        platform: "stream",
        pairing_code: `WXYZ-${1000 + i}`,
      });
      expect(r.status, JSON.stringify(r.json)).toBe(401);
    }
    const after = await post(server.url, "/v1/devices/sign-in", pairing, {
      name: "phone",
      platform: "stream",
      pairing_code: "WXYZ-2000",
    });
    expect(after.status).toBe(429);

    const polling = newClient();
    for (let i = 0; i < limit; i++) {
      const r = await post(server.url, "/v1/auth/device/token", polling, {
        device_code: `not-a-code-${i}`,
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    }
    const late = await post(server.url, "/v1/auth/device/token", polling, { device_code: "x" });
    expect(late.status).toBe(429);
  });
});
