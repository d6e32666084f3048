/**
 * Who may call what: credentials on every surface, scopes, and isolation between projects.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintCredential } from "../../src/domain/credentials.ts";
import { sql } from "../helpers/db.ts";
import { body, refusedAt } from "../helpers/http.ts";
import {
  addKey,
  addProjectWithKey,
  notify,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ credentialCacheMs: 200 });
});
afterAll(async () => server.close());

async function expect401(authorization: string | undefined) {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  const res = await fetch(`${server.url}/v1/notify`, {
    method: "POST",
    headers,
    body: JSON.stringify({ title: "t" }),
  });
  const json = await body(res);
  expect(res.status).toBe(401);
  expect(json.code).toBe("unauthenticated");
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="herald"/);
  return json;
}

describe("authentication", () => {
  it("refuses a missing credential", async () => {
    await expect401(undefined);
  });
  it("refuses a malformed one, and a non-Bearer scheme", async () => {
    await expect401("Bearer nonsense");
    await expect401(`Basic ${server.apiKey}`);
    await expect401("Bearer ");
  });
  // That no lookup happens is the pure parseCredential's (test/unit/domain/credentials.test.ts).
  it("refuses a key whose checksum is wrong, saying so (a typo, or a copy cut short)", async () => {
    const good = server.apiKey;
    const last = good.at(-1) === "A" ? "B" : "A";
    const bad = good.slice(0, -1) + last;
    const json = await expect401(`Bearer ${bad}`);
    expect(json.detail).toBe(
      "the credential's checksum does not match: a typo, or a copy cut short",
    );
  });
  it("refuses a well-formed key that does not exist", async () => {
    const json = await expect401(`Bearer ${mintCredential("apiKey")}`);
    expect(json.detail).toMatch(/unknown, expired or revoked/);
  });
  it("refuses a revoked key within a second", async () => {
    const { apiKey, keyId } = await addKey(server, server.projectId, ["write"]);
    expect(
      (await notify(server, { title: "t" }, { authorization: `Bearer ${apiKey}` })).status,
    ).toBe(202);
    await sql(server.databaseUrl, "update api_key set revoked_at = now() where id = $1", [keyId]);
    // Every cache forgets it within a second.
    await waitFor(() => refusedAt(server.url, apiKey), 1_000);
    await expect401(`Bearer ${apiKey}`);
  });
  it("never echoes the credential", async () => {
    const secret = mintCredential("apiKey");
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}` },
      body: "{}",
    });
    expect(await res.text()).not.toContain(secret);
  });
});

describe("scopes", () => {
  it("a read-only key cannot publish: 403", async () => {
    const { apiKey } = await addKey(server, server.projectId, ["read"]);
    const res = await notify(server, { title: "t" }, { authorization: `Bearer ${apiKey}` });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("permission_denied");
  });
  it("a write-only key cannot read notifications: 403", async () => {
    const { apiKey } = await addKey(server, server.projectId, ["write"]);
    const created = await notify(server, { title: "t" }, { authorization: `Bearer ${apiKey}` });
    expect(created.status).toBe(202);
    const res = await fetch(`${server.url}${created.headers.get("location")}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(403);
  });
  it("authentication comes before validation: garbage from a stranger is 401, not 400", async () => {
    const res = await fetch(`${server.url}/v1/notify`, { method: "POST", body: "{not json" });
    expect(res.status).toBe(401);
  });
});

describe("isolation between projects", () => {
  it("another project's notification is 404 and never listed", async () => {
    const other = await addProjectWithKey(server, { newAccount: true });
    const mine = await notify(server, { title: "private", topic: "secret" });
    const res = await fetch(`${server.url}/v1/notifications/${mine.json.id}`, {
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(res.status).toBe(404);
    expect((await body(res)).code).toBe("not_found");
    const list = await fetch(`${server.url}/v1/notifications?topic=secret`, {
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect((await body(list)).notifications).toEqual([]);
    const own = await fetch(`${server.url}/v1/notifications/${mine.json.id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(own.status).toBe(200);
    expect((await body(own)).title).toBe("private");
  });
  it("knowing a topic name grants nothing", async () => {
    await notify(server, { title: "t", topic: "deploys" });
    const res = await fetch(`${server.url}/v1/notifications?topic=deploys`);
    expect(res.status).toBe(401);
  });
});

describe("ListNotifications", () => {
  it("pages newest first and filters by topic", async () => {
    const p = await addProjectWithKey(server);
    const auth = { authorization: `Bearer ${p.apiKey}` };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await notify(server, { title: `n${i}`, topic: i % 2 ? "odd" : "even" }, auth);
      ids.push(r.json.id);
    }
    const page1 = await body(
      await fetch(`${server.url}/v1/notifications?page_size=2`, { headers: auth }),
    );
    expect(page1.notifications.map((n: { id: string }) => n.id)).toEqual([ids[4], ids[3]]);
    const page2 = await body(
      await fetch(
        `${server.url}/v1/notifications?page_size=2&page_token=${page1.next_page_token}`,
        { headers: auth },
      ),
    );
    expect(page2.notifications.map((n: { id: string }) => n.id)).toEqual([ids[2], ids[1]]);
    const odd = await body(
      await fetch(`${server.url}/v1/notifications?topic=odd`, { headers: auth }),
    );
    expect(odd.notifications.map((n: { title: string }) => n.title)).toEqual(["n3", "n1"]);
    expect(odd.next_page_token).toBe("");
    const bad = await fetch(`${server.url}/v1/notifications?page_size=101&page_token=zz`, {
      headers: auth,
    });
    expect(bad.status).toBe(400);
  });
  it("refuses a malformed id with 400", async () => {
    const res = await fetch(`${server.url}/v1/notifications/not-a-uuid`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(res.status).toBe(400);
    expect((await body(res)).errors[0].field).toBe("id");
  });
});
