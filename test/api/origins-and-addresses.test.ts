/**
 * Issue 21's smaller findings, over the API: IPv6-literal webhook URLs are judged by their
 * address (N1); special-purpose ranges are refused (N2); a console session's Origin must match
 * in scheme too (N3); `/mcp` refuses a foreign page's Origin (N5).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, type JsonBody } from "../helpers/http.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  // Webhook URLs are checked for public addresses (the default; other tests allow private).
  server = await startServer({ webhookAllowPrivate: false });
});
afterAll(async () => server.close());

async function register(url: string) {
  const res = await fetch(`${server.url}/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}` },
    body: JSON.stringify({ url, event_types: ["notification.created"] }),
  });
  return { status: res.status, json: (await body(res)) as JsonBody };
}

describe("webhook URLs", () => {
  it("take a public IPv6 literal, and refuse private and special-purpose addresses", async () => {
    expect((await register("https://[2606:4700:4700::1111]/hooks")).status).toBe(200);
    for (const url of [
      "https://[fd00::1]/hooks",
      "https://[2001:db8::1]/hooks",
      "https://198.51.100.7/hooks",
      "https://192.0.0.170/hooks",
      "https://198.18.0.1/hooks",
    ]) {
      const r = await register(url);
      expect(r.status, url).toBe(400);
      expect(r.json.code).toBe("invalid_argument");
    }
    // A receiver on the operator's network: the refusal names the switch that allows it.
    const lan = await register("http://192.168.1.10/hook");
    expect(JSON.stringify(lan.json)).toContain("HERALD_WEBHOOK_ALLOW_PRIVATE=1");
  });

  it("point at the reference the console links to", async () => {
    const doc = await fetch(`${server.url}/docs/api.md`);
    expect(doc.status).toBe(200);
    expect(doc.headers.get("content-type")).toMatch(/text\/markdown/);
    expect(await doc.text()).toContain("## Webhooks");
    expect((await fetch(`${server.url}/docs/..%2Fpackage.json`)).status).toBe(404);
  });
});

describe("Origin checks", () => {
  it("a console session refuses a page of the same host over another scheme", async () => {
    const host = new URL(server.url).host;
    const signIn = (origin: string) =>
      fetch(`${server.url}/herald.v1.AuthService/StartSession`, {
        method: "POST",
        headers: { "content-type": "application/json", origin },
        body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
      });
    expect((await signIn(`https://${host}`)).status).toBe(403);
    expect((await signIn(`http://${host}`)).status).toBe(200);
  });

  it("a console reached past its public URL says where to sign in", async () => {
    const proxied = await startServer({ publicUrl: "https://herald.example.net" });
    try {
      const signIn = (origin: string) =>
        fetch(`${proxied.url}/herald.v1.AuthService/StartSession`, {
          method: "POST",
          headers: { "content-type": "application/json", origin },
          body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
        });
      const direct = await signIn(proxied.url);
      expect(direct.status).toBe(403);
      expect(await direct.json()).toMatchObject({
        code: "permission_denied",
        message:
          "console sessions start from the console at https://herald.example.net (HERALD_PUBLIC_URL)",
      });
      expect((await signIn("https://herald.example.net")).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it("/mcp refuses a foreign page's Origin with 403, and takes its own", async () => {
    const post = (origin?: string) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${server.apiKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
    const foreign = await post("https://evil.example");
    expect(foreign.status).toBe(403);
    expect((await body(foreign)).code).toBe("permission_denied");
    const own = await post(`http://${new URL(server.url).host}`);
    expect(own.status).toBe(200);
    await own.body?.cancel();
    const none = await post();
    expect(none.status).toBe(200);
    await none.body?.cancel();
  });
});
