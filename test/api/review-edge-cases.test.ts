/**
 * Edge cases found in review (issue 12, the first of them): a top-level `__proto__` member is an
 * unknown field like any other, and a stream device that reconnects is not sent notifications
 * whose ttl has passed.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { sql } from "../helpers/db.ts";
import { notify, ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 300 });
});
afterAll(async () => server.close());

describe("metadata is returned as sent", () => {
  const publish = (body: string) =>
    fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body,
    });

  it("refuses a number a double cannot hold exactly, naming where it is", async () => {
    const res = await publish(
      '{"title":"t","metadata":{"build":{"ids":[1, 12345678901234567890]},"pi":3.14159265358979323846}}',
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { field: string; message: string }[] };
    expect(body.errors.map((e) => e.field).sort()).toEqual([
      "metadata.build.ids[1]",
      "metadata.pi",
    ]);
    expect(body.errors[0]?.message).toMatch(/cannot be kept exactly.*send it as a string/);
  });

  it("keeps values, nesting and the documented key order, over REST and gRPC alike", async () => {
    const sent =
      '{"title":"t","metadata":{"b":1.0,"a":{"z":[1e3,0.1,"x",null,true]},"10":"ten","2":"two","big":"12345678901234567890"}}';
    const res = await publish(sent);
    expect(res.status).toBe(202);
    const text = await res.text();
    // The rule (docs/api.md): values unchanged, `1.0` and `1e3` written as 1 and 1000;
    // integer-like keys first in ascending order, then the others in the order sent.
    const expected =
      '{"2":"two","10":"ten","b":1,"a":{"z":[1000,0.1,"x",null,true]},"big":"12345678901234567890"}';
    expect(text).toContain(`"metadata":${expected}`);
    const id = (JSON.parse(text) as { id: string }).id;
    const read = await fetch(`${server.url}/v1/notifications/${id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(await read.text()).toContain(`"metadata":${expected}`);
  });
});

describe("a publish body", () => {
  it("with a top-level __proto__ member is refused like any unknown field", async () => {
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: '{"title":"t","__proto__":{"priority":"high"}}',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { field: string; message: string }[] };
    expect(body.errors).toEqual([
      { field: "__proto__", message: "is not a field of this request" },
    ]);
  });
});

describe("a stream device that comes back", () => {
  it("is not sent what expired while it was away, with or without since", async () => {
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const { deviceCredential } = await devices.signInDevice({
      method: { case: "password", value: { email: "owner@example.com", password: ownerPassword } },
      name: "laptop",
      platform: "stream",
    });
    const auth = { headers: { authorization: `Bearer ${deviceCredential}` } };
    await devices.setTopicFilter({ topics: ["expiry"] }, auth);
    const first = await notify(server, { title: "seen", topic: "expiry" });
    const expired = await notify(server, { title: "too late", topic: "expiry", ttl_seconds: 30 });
    const fresh = await notify(server, { title: "still good", topic: "expiry", ttl_seconds: 3600 });
    expect([first.status, expired.status, fresh.status]).toEqual([202, 202, 202]);
    // Its ttl passes while the device is away (sooner than waiting 30 s).
    await sql(
      server.databaseUrl,
      "update notification set expires_at = now() - interval '1 second' where id = $1",
      [expired.json.id],
    );
    const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: server.url }));
    for (const since of [first.json.id as string, ""]) {
      const titles: string[] = [];
      const abort = new AbortController();
      const stream = (async () => {
        for await (const m of inbox.subscribe({ since }, { ...auth, signal: abort.signal })) {
          if (m.event.case === "notification") titles.push(m.event.value.title);
          else if (titles.length > 0 || since === "") abort.abort(); // a keepalive: all was sent
        }
      })().catch(() => {});
      await stream;
      expect(titles, `since ${since || "(none)"}`).not.toContain("too late");
      if (since) expect(titles).toEqual(["still good"]);
    }
  });
});
