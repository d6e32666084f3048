/**
 * The client address behind a reverse proxy: X-Forwarded-For counts only from the proxies that
 * HERALD_TRUST_PROXY names, so the per-address failed-login limit tells clients apart there and
 * cannot be escaped by a client that writes the header itself.
 */
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { defaultLimits } from "../../src/domain/limits.ts";
import { body } from "../helpers/http.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let behindProxy: TestServer;
let oneHop: TestServer;
let direct: TestServer;
beforeAll(async () => {
  [behindProxy, oneHop, direct] = await Promise.all([
    startServer({ limits: { ...defaultLimits, failedAuthPerMinute: 2 }, trustProxy: "127.0.0.1" }),
    startServer({ limits: { ...defaultLimits, failedAuthPerMinute: 2 }, trustProxy: 1 }),
    startServer({ limits: { ...defaultLimits, failedAuthPerMinute: 2 } }),
  ]);
});
afterAll(async () => Promise.all([behindProxy.close(), oneHop.close(), direct.close()]));

let n = 0;
async function failLogin(server: TestServer, forwardedFor: string) {
  n++;
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: "POST",
    headers: { "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ email: `nobody${n}@example.com`, password: "not the password" }),
  });
  return { status: res.status, code: (await body(res)).code as string };
}

/** A gRPC publish with a wrong key, over h2c (answered before Fastify): its grpc-status. */
async function failGrpc(server: TestServer, forwardedFor: string): Promise<string | undefined> {
  const session = http2.connect(server.url);
  try {
    return await new Promise((resolve, reject) => {
      const req = session.request({
        ":method": "POST",
        ":path": "/herald.v1.NotifyService/Notify",
        "content-type": "application/grpc",
        te: "trailers",
        authorization: "Bearer hk_not_a_key",
        "x-forwarded-for": forwardedFor,
      });
      let status: string | undefined;
      const read = (h: http2.IncomingHttpHeaders) => {
        status ??= h["grpc-status"] as string | undefined;
      };
      req.on("response", read);
      req.on("trailers", read);
      req.on("error", reject);
      req.on("end", () => resolve(status));
      req.resume();
      req.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  } finally {
    session.close();
  }
}

describe("client addresses behind a proxy", () => {
  it("counts failed logins per forwarded address when the proxy is trusted", async () => {
    expect((await failLogin(behindProxy, "203.0.113.1")).code).toBe("unauthenticated");
    expect((await failLogin(behindProxy, "203.0.113.1")).code).toBe("unauthenticated");
    expect(await failLogin(behindProxy, "203.0.113.1")).toEqual({
      status: 429,
      code: "rate_limited",
    });
    // Another client behind the same proxy is not locked out.
    expect((await failLogin(behindProxy, "203.0.113.2")).code).toBe("unauthenticated");
  });

  it("with a hop count, takes the address the trusted proxy added, not what the client wrote", async () => {
    // The client wrote "10.9.9.9"; the proxy appended the address it saw.
    expect((await failLogin(oneHop, "10.9.9.9, 203.0.113.7")).code).toBe("unauthenticated");
    expect((await failLogin(oneHop, "10.9.9.9, 203.0.113.7")).code).toBe("unauthenticated");
    expect((await failLogin(oneHop, "10.9.9.9, 203.0.113.7")).status).toBe(429);
    expect((await failLogin(oneHop, "10.9.9.9, 203.0.113.8")).code).toBe("unauthenticated");
  });

  it("ignores X-Forwarded-For from a peer it does not trust", async () => {
    expect((await failLogin(direct, "198.51.100.1")).code).toBe("unauthenticated");
    expect((await failLogin(direct, "198.51.100.2")).code).toBe("unauthenticated");
    // A third "address" is the same peer: the header does not let it escape the limit.
    expect(await failLogin(direct, "198.51.100.3")).toEqual({ status: 429, code: "rate_limited" });
  });

  it("tells gRPC callers behind a trusted proxy apart by their forwarded address", async () => {
    // 16 unauthenticated, 8 resource exhausted (rate_limited).
    expect(await failGrpc(behindProxy, "203.0.113.21")).toBe("16");
    expect(await failGrpc(behindProxy, "203.0.113.21")).toBe("16");
    expect(await failGrpc(behindProxy, "203.0.113.21")).toBe("8");
    expect(await failGrpc(behindProxy, "203.0.113.22")).toBe("16");
    // With a hop count: the address the proxy added, not what the client wrote before it.
    expect(await failGrpc(oneHop, "10.9.9.9, 203.0.113.31")).toBe("16");
    expect(await failGrpc(oneHop, "10.9.9.9, 203.0.113.31")).toBe("16");
    expect(await failGrpc(oneHop, "10.9.9.9, 203.0.113.31")).toBe("8");
    expect(await failGrpc(oneHop, "10.9.9.9, 203.0.113.32")).toBe("16");
  });

  it("refuses to trust every proxy", () => {
    expect(() => loadConfig({ HERALD_TRUST_PROXY: "true" })).toThrow(/HERALD_TRUST_PROXY/);
    expect(loadConfig({ HERALD_TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({}).trustProxy).toBe(false);
  });
});
