/**
 * POST /v1/notify field by field, at each boundary on both sides, against the real server.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

/** A string of n code points, each outside the BMP (2 UTF-16 units, 4 UTF-8 bytes). */
const astral = (n: number) => "😀".repeat(n);

function fieldsOf(json: JsonBody): string[] {
  return (json.errors ?? []).map((e: { field: string }) => e.field);
}

async function expectRejected(body: unknown, field: string) {
  const res = await notify(server, body);
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.json.code).toBe("invalid_argument");
  expect(fieldsOf(res.json)).toContain(field);
  return res;
}

async function expectAccepted(body: unknown) {
  const res = await notify(server, body);
  expect(res.status, res.text).toBe(202);
  return res;
}

describe("title", () => {
  it("accepts 120 code points outside the BMP and refuses 121", async () => {
    const ok = await expectAccepted({ title: astral(120) });
    expect(ok.json.title).toBe(astral(120));
    await expectRejected({ title: astral(121) }, "title");
  });
  it("is required and must not be blank", async () => {
    await expectRejected({}, "title");
    await expectRejected({ title: "" }, "title");
    await expectRejected({ title: " \t\u3000 " }, "title");
    await expectRejected({ title: null }, "title");
  });
  it("must be a string", async () => {
    const res = await expectRejected({ title: 42 }, "title");
    expect(res.json.errors[0].message).toBe("must be a string");
  });
});

describe("message", () => {
  it("accepts 2048 code points and refuses 2049", async () => {
    await expectAccepted({ title: "t", message: astral(2048) });
    await expectRejected({ title: "t", message: astral(2049) }, "message");
  });
});

describe("topic", () => {
  it("accepts the allowed alphabet up to 64 characters", async () => {
    const res = await expectAccepted({ title: "t", topic: `a-b_c9${"x".repeat(58)}` });
    expect(res.json.topic).toHaveLength(64);
  });
  it("defaults to `default` when absent or empty", async () => {
    expect((await expectAccepted({ title: "t" })).json.topic).toBe("default");
    expect((await expectAccepted({ title: "t", topic: "" })).json.topic).toBe("default");
  });
  it("refuses uppercase, other characters and 65 characters", async () => {
    await expectRejected({ title: "t", topic: "Deploys" }, "topic");
    await expectRejected({ title: "t", topic: "a.b" }, "topic");
    await expectRejected({ title: "t", topic: "x".repeat(65) }, "topic");
  });
});

describe("priority", () => {
  it("accepts low, normal, high and defaults to normal", async () => {
    for (const p of ["low", "normal", "high"]) {
      expect((await expectAccepted({ title: "t", priority: p })).json.priority).toBe(p);
    }
    expect((await expectAccepted({ title: "t" })).json.priority).toBe("normal");
  });
  it("refuses anything else", async () => {
    await expectRejected({ title: "t", priority: "urgent" }, "priority");
    await expectRejected({ title: "t", priority: "HIGH" }, "priority");
  });
});

describe("ttl_seconds", () => {
  it("accepts 30 and 86400 and sets expires_at", async () => {
    const low = await expectAccepted({ title: "t", ttl_seconds: 30 });
    expect(Date.parse(low.json.expires_at) - Date.parse(low.json.created_at)).toBe(30_000);
    await expectAccepted({ title: "t", ttl_seconds: 86400 });
  });
  it("refuses 29, 86401, 30.5 and a string", async () => {
    await expectRejected({ title: "t", ttl_seconds: 29 }, "ttl_seconds");
    await expectRejected({ title: "t", ttl_seconds: 86401 }, "ttl_seconds");
    const frac = await expectRejected({ title: "t", ttl_seconds: 30.5 }, "ttl_seconds");
    expect(frac.json.errors[0].message).toBe("must be an integer");
    await expectRejected({ title: "t", ttl_seconds: "60" }, "ttl_seconds");
  });
});

describe("metadata", () => {
  /** An object whose compact JSON is exactly n bytes, using multi-byte characters. */
  function metadataOfBytes(n: number) {
    const base = JSON.stringify({ k: "" }).length; // {"k":""} = 8 bytes
    const fill = n - base;
    const value = "é".repeat(Math.floor(fill / 2)) + "a".repeat(fill % 2);
    const m = { k: value };
    expect(Buffer.byteLength(JSON.stringify(m))).toBe(n);
    return m;
  }
  it("accepts exactly 2048 bytes and refuses 2049", async () => {
    await expectAccepted({ title: "t", metadata: metadataOfBytes(2048) });
    const res = await expectRejected({ title: "t", metadata: metadataOfBytes(2049) }, "metadata");
    expect(res.json.errors[0].message).toContain("2049");
  });
  it("is returned as sent, key order included", async () => {
    const metadata = { zeta: 1, alpha: { nested: [1, "two", null, true] }, mid: "é" };
    const res = await expectAccepted({ title: "t", metadata });
    expect(JSON.stringify(res.json.metadata)).toBe(JSON.stringify(metadata));
    const get = await fetch(`${server.url}/v1/notifications/${res.json.id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(JSON.stringify((await body(get)).metadata)).toBe(JSON.stringify(metadata));
  });
  it("must be an object", async () => {
    await expectRejected({ title: "t", metadata: [1, 2] }, "metadata");
    await expectRejected({ title: "t", metadata: "x" }, "metadata");
  });
});

describe("click_url", () => {
  it("accepts public http and https URLs", async () => {
    for (const u of [
      "https://ci.example.com/build/42?x=1#l",
      "http://93.184.216.34/",
      "https://[2606:4700::1111]/",
    ]) {
      expect((await expectAccepted({ title: "t", click_url: u })).json.click_url).toBe(u);
    }
  });
  it.each([
    "ftp://example.com/",
    "javascript:alert(1)",
    "/relative/path",
    "https://user:pw@example.com/",
    "https://user@example.com/",
    "http://localhost:8080/",
    "http://foo.localhost/",
    "http://printer.local/",
    "http://metadata.google.internal/",
    "http://intranet/",
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:10.0.0.1]/",
    `https://example.com/${"a".repeat(2048)}`,
  ])("refuses %s", async (u) => {
    await expectRejected({ title: "t", click_url: u }, "click_url");
  });
});

describe("the body", () => {
  it("names every bad field at once", async () => {
    const res = await notify(server, {
      title: "",
      message: astral(2049),
      topic: "BAD",
      priority: "x",
      ttl_seconds: 5,
      click_url: "http://10.0.0.1/",
      color: "red",
    });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.json).sort()).toEqual(
      ["click_url", "color", "message", "priority", "title", "topic", "ttl_seconds"].sort(),
    );
    expect(res.json.request_id).toBe(res.headers.get("request-id"));
    expect(res.json).toMatchObject({
      status: 400,
      title: "Invalid request",
      type: "/docs/errors#invalid_argument",
    });
  });
  it("refuses unknown fields, naming them", async () => {
    const res = await expectRejected({ title: "t", sound: "ping" }, "sound");
    expect(res.json.errors[0].message).toBe("is not a field of this request");
  });
  it("refuses a body that is not a JSON object", async () => {
    await expectRejected("[1,2]", "(body)");
    await expectRejected('"title"', "(body)");
    await expectRejected("null", "(body)");
    await expectRejected("{not json", "(body)");
    // No body at all is an empty request: what it lacks is named, not the body.
    expect(fieldsOf((await expectRejected("", "title")).json)).toEqual(["title"]);
  });
  it("is parsed as JSON whatever the Content-Type", async () => {
    const body = JSON.stringify({ title: "ct" });
    for (const ct of [
      undefined,
      "application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/octet-stream",
    ]) {
      const headers: Record<string, string> = { authorization: `Bearer ${server.apiKey}` };
      if (ct) headers["content-type"] = ct;
      const res = await fetch(`${server.url}/v1/notify`, { method: "POST", headers, body });
      expect(res.status, `content-type ${ct}`).toBe(202);
    }
  });
  it("answers 413 above 16 KiB, with a problem body", async () => {
    const res = await notify(server, { title: "t", message: "a".repeat(17 * 1024) });
    expect(res.status).toBe(413);
    expect(res.json.code).toBe("payload_too_large");
  });
});

describe("the 202 answer", () => {
  it("is the notification resource with Location, committed before it is sent", async () => {
    const res = await expectAccepted({
      title: "Deploy finished",
      priority: "high",
      topic: "deploys",
    });
    expect(Object.keys(res.json)).toEqual([
      "id",
      "project_id",
      "topic",
      "title",
      "message",
      "priority",
      "click_url",
      "metadata",
      "ttl_seconds",
      "status",
      "created_at",
      "expires_at",
      "deliveries",
      "device_deliveries",
      "deliver_at",
      "require_ack",
      "repeat_every_seconds",
      "escalate_after_seconds",
      "acknowledged_at",
      "acknowledged_by_device_id",
      "repeats",
      "escalated_at",
      "escalation_id",
      "actions",
      "response",
      "replace_key",
    ]);
    expect(res.json).toMatchObject({
      project_id: server.projectId,
      status: "queued",
      click_url: null,
      metadata: null,
      expires_at: null,
      deliveries: {
        total: 0,
        pending: 0,
        sent: 0,
        delivered: 0,
        failed: 0,
        expired: 0,
        canceled: 0,
      },
      deliver_at: null,
      require_ack: false,
      repeat_every_seconds: null,
      acknowledged_at: null,
      repeats: 0,
    });
    expect(res.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(res.headers.get("location")).toBe(`/v1/notifications/${res.json.id}`);
    const rows = await sql(
      server.databaseUrl,
      "select title, topic from notification where id = $1",
      [res.json.id],
    );
    expect(rows).toEqual([{ title: "Deploy finished", topic: "deploys" }]);
  });
});

describe("methods and paths", () => {
  it("answers 405 with Allow for a known path and another method, 404 for an unknown path", async () => {
    const auth = { authorization: `Bearer ${server.apiKey}` };
    const get = await fetch(`${server.url}/v1/notify`, { headers: auth });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(get.headers.get("content-type")).toContain("application/problem+json");
    expect((await body(get)).code).toBe("method_not_allowed");

    const del = await fetch(`${server.url}/v1/notifications/0190c0de-0000-7000-8000-000000000000`, {
      method: "PATCH",
      headers: auth,
    });
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")?.split(", ").sort()).toEqual(["DELETE", "GET", "HEAD"]);
    await del.arrayBuffer();

    const rpc = await fetch(`${server.url}/herald.v1.NotifyService/Notify`, { method: "PUT" });
    expect(rpc.status).toBe(405);
    expect(rpc.headers.get("allow")).toBe("POST");
    await rpc.arrayBuffer();
    // Connect's GET is for methods without side effects alone: never a publish.
    const publishByGet = await fetch(
      `${server.url}/herald.v1.NotifyService/Notify?connect=v1&encoding=json&message=%7B%7D`,
      { headers: auth },
    );
    expect(publishByGet.status).toBe(405);
    expect(publishByGet.headers.get("allow")).toBe("POST");
    await publishByGet.arrayBuffer();
    const read = await fetch(`${server.url}/herald.v1.NotifyService/ListNotifications`, {
      method: "PUT",
    });
    expect(read.status).toBe(405);
    expect(read.headers.get("allow")).toBe("POST, GET");
    await read.arrayBuffer();

    const unknown = await fetch(`${server.url}/v1/nothing-here`, { headers: auth });
    expect(unknown.status).toBe(404);
    expect((await body(unknown)).code).toBe("not_found");
  });
});
