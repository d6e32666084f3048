/**
 * Devices: sign-in (password, pairing code), push channels sealed at rest, topic filters, owner
 * management, and key rotation.
 */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { DeviceRepository } from "../../src/db/repositories/devices.ts";
import { HookRepository } from "../../src/db/repositories/hooks.ts";
import { reencryptSecrets } from "../../src/db/repositories/sealed-secrets.ts";
import { PushTokenKeyRing } from "../../src/domain/push-token-crypto.ts";
import { newAccount } from "../helpers/accounts.ts";
import { sql } from "../helpers/db.ts";
import { failure } from "../helpers/http.ts";
import { ownerPassword, startServer, type TestServer, testTokenKeys } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

const devices = () =>
  createClient(DeviceService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });
const apnsToken = (n: number) => n.toString(16).padStart(64, "a");

async function ownerToken(): Promise<string> {
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: "POST",
    body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
  });
  return ((await res.json()) as { token: string }).token;
}

async function signIn(platform = "ios", name = "phone") {
  return devices().signInDevice({
    method: { case: "password", value: { email: "owner@example.com", password: ownerPassword } },
    name,
    platform,
  });
}

describe("device sign-in", () => {
  it("with a password, and with a single-use pairing code", async () => {
    const byPassword = await signIn();
    expect(byPassword.deviceCredential).toMatch(/^hd_[0-9A-Za-z]{38}$/);
    expect(byPassword.device).toMatchObject({ platform: "ios", enabled: true, tokenLast4: "" });

    const owner = await ownerToken();
    const { code } = await devices().createPairingCode({}, bearer(owner));
    expect(code).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    const paired = await devices().signInDevice({
      method: { case: "pairingCode", value: code.toLowerCase() },
      name: "tablet",
      platform: "android",
    });
    expect(paired.device?.name).toBe("tablet");
    const reused = await failure(
      devices().signInDevice({
        method: { case: "pairingCode", value: code },
        name: "x",
        platform: "web",
      }),
    );
    expect(reused.code).toBe(Code.Unauthenticated);
    const wrong = await failure(
      devices().signInDevice({
        method: {
          case: "password",
          value: { email: "owner@example.com", password: "nope nope nope" },
        },
        name: "x",
        platform: "ios",
      }),
    );
    expect(wrong.code).toBe(Code.Unauthenticated);
  });
});

describe("push channels", () => {
  it("are stored sealed: the raw table holds no token, the API shows only the last 4", async () => {
    const { deviceCredential, device } = await signIn("ios", "sealed");
    const token = apnsToken(0xbeef);
    const res = await devices().registerChannel(
      { channel: { case: "pushToken", value: token } },
      bearer(deviceCredential),
    );
    expect(res.device?.tokenLast4).toBe(token.slice(-4));
    const web = await signIn("web", "browser");
    const endpoint = "https://push.example.net/send/abcdef0123456789";
    const registered = await devices().registerChannel(
      {
        channel: {
          case: "webPush",
          value: { endpoint, p256dh: "BPublicKeyMaterial", auth: "authSecret" },
        },
      },
      bearer(web.deviceCredential),
    );
    // What listings show of a Web Push channel: the end of its endpoint, not of stored JSON.
    expect(registered.device?.tokenLast4).toBe("6789");
    const rows = await sql(server.databaseUrl, "select d::text as row from device d");
    const dump = rows.map((r) => r.row).join("\n");
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.toUpperCase());
    expect(dump).not.toContain(endpoint);
    expect(dump).not.toContain("authSecret");
    expect(dump).not.toContain(Buffer.from(token).toString("hex"));
    // The sealed box opens only with the device's own id as associated data.
    const [row] = await sql<{ token_key_id: string; token_box: Buffer }>(
      server.databaseUrl,
      "select token_key_id, token_box from device where id = $1",
      [device?.id],
    );
    expect(row?.token_key_id).toBe("k2");
    const sealed = { keyId: row?.token_key_id as string, box: row?.token_box as Buffer };
    expect(testTokenKeys.open(sealed, device?.id as string)).toBe(token);
    expect(() => testTokenKeys.open(sealed, web.device?.id as string)).toThrow();
  });

  it("registering a token another device holds signs that device out", async () => {
    const first = await signIn("android", "old install");
    const second = await signIn("android", "new install");
    const token = "fcm-token:APA91bH-same-physical-device";
    await devices().registerChannel(
      { channel: { case: "pushToken", value: token } },
      bearer(first.deviceCredential),
    );
    await devices().registerChannel(
      { channel: { case: "pushToken", value: token } },
      bearer(second.deviceCredential),
    );
    const list = await devices().listDevices({}, bearer(await ownerToken()));
    const names = list.devices.map((d) => d.name);
    expect(names).toContain("new install");
    expect(names).not.toContain("old install");
  });

  it("refuses a malformed token and a channel of the wrong kind", async () => {
    const ios = await signIn("ios");
    expect(
      (
        await failure(
          devices().registerChannel(
            { channel: { case: "pushToken", value: "not hex!!" } },
            bearer(ios.deviceCredential),
          ),
        )
      ).code,
    ).toBe(Code.InvalidArgument);
    const stream = await signIn("stream");
    expect(
      (
        await failure(
          devices().registerChannel(
            { channel: { case: "pushToken", value: apnsToken(1) } },
            bearer(stream.deviceCredential),
          ),
        )
      ).code,
    ).toBe(Code.FailedPrecondition);
  });
});

describe("topic filters and owner management", () => {
  it("sets a filter; the owner renames and removes; a removed device is signed out", async () => {
    const { deviceCredential, device } = await signIn("ios", "watch");
    const filtered = await devices().setTopicFilter(
      { topics: ["deploys", "ci/*", "default/alerts"] },
      bearer(deviceCredential),
    );
    expect(filtered.device?.topics).toEqual(["deploys", "ci/*", "default/alerts"]);
    const bad = await failure(
      devices().setTopicFilter({ topics: ["Bad Topic"] }, bearer(deviceCredential)),
    );
    expect(bad.code).toBe(Code.InvalidArgument);

    const owner = await ownerToken();
    const renamed = await devices().renameDevice(
      { id: device?.id as string, name: "Apple Watch" },
      bearer(owner),
    );
    expect(renamed.device?.name).toBe("Apple Watch");
    await devices().removeDevice({ id: device?.id as string }, bearer(owner));
    const after = await failure(devices().setTopicFilter({ topics: [] }, bearer(deviceCredential)));
    expect(after.code).toBe(Code.Unauthenticated);
    expect(
      (await failure(devices().removeDevice({ id: device?.id as string }, bearer(owner)))).code,
    ).toBe(Code.NotFound);
  });
});

describe("a device's topics, set by the owner", () => {
  it("from a CLI token (a phone's, from the console or the CLI), only of the account's devices", async () => {
    const phone = await signIn("ios", "pager phone");
    const id = phone.device?.id as string;
    const owner = await ownerToken();
    // REST, as the console and curl send it.
    const put = (path: string, secret: string, topics: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ topics }),
      });
    const set = await put(`/v1/devices/${id}/topics`, owner, ["oncall", "ci/*", "oncall"]);
    expect(set.status).toBe(200);
    expect(((await set.json()) as { topics: string[] }).topics).toEqual(["oncall", "ci/*"]);
    const [row] = await sql<{ topics: string[]; seen: boolean }>(
      server.databaseUrl,
      "select topics, coalesce(last_seen_at > now() - interval '1 second', false) as seen from device where id = $1",
      [id],
    );
    expect(row?.topics).toEqual(["oncall", "ci/*"]);
    // Set by the owner, not by the device: the device was not seen now.
    expect(row?.seen).toBe(false);
    // A CLI token names the device; another account's token finds none of ours.
    const unnamed = await put("/v1/device/topics", owner, ["x"]);
    expect(unnamed.status).toBe(400);
    expect(JSON.stringify(await unnamed.json())).toContain('"field":"id"');
    const stranger = await newAccount(server, "topics-stranger@example.com");
    expect((await put(`/v1/devices/${id}/topics`, stranger.token, [])).status).toBe(404);
    // A device sets its own (by its id too), never another's.
    const other = await signIn("android", "tablet");
    const others = await failure(
      devices().setTopicFilter({ id, topics: [] }, bearer(other.deviceCredential)),
    );
    expect(others.code).toBe(Code.NotFound);
    const own = await devices().setTopicFilter(
      { id: other.device?.id as string, topics: ["deploys"] },
      bearer(other.deviceCredential),
    );
    expect(own.device?.topics).toEqual(["deploys"]);
    // Nothing of the stranger's or the other device's reached the phone's filter.
    const [after] = await sql<{ topics: string[] }>(
      server.databaseUrl,
      "select topics from device where id = $1",
      [id],
    );
    expect(after?.topics).toEqual(["oncall", "ci/*"]);
  });
});

describe("key rotation", () => {
  it("re-encrypts every token under the newest key, and tokens still open", async () => {
    const { deviceCredential, device } = await signIn("ios", "rotating");
    const token = apnsToken(0xcafe);
    await devices().registerChannel(
      { channel: { case: "pushToken", value: token } },
      bearer(deviceCredential),
    );
    const rotated = new PushTokenKeyRing(
      [{ id: "k3", key: Buffer.alloc(32, 3) }, ...testTokenKeys.keys],
      Buffer.alloc(32, 9),
    );
    const store = new DeviceRepository(server.orm, rotated);
    expect(await store.reencryptAll()).toBeGreaterThanOrEqual(1);
    const keyIds = await sql<{ token_key_id: string }>(
      server.databaseUrl,
      "select distinct token_key_id from device where token_box is not null",
    );
    expect(keyIds).toEqual([{ token_key_id: "k3" }]);
    const [sealed] = await sql<{ token_key_id: string; token_box: Buffer }>(
      server.databaseUrl,
      "select token_key_id, token_box from device where id = $1",
      [device?.id],
    );
    expect(
      rotated.open(
        { keyId: sealed?.token_key_id as string, box: sealed?.token_box as Buffer },
        device?.id as string,
      ),
    ).toBe(token);
    expect(await store.reencryptAll()).toBe(0);
  });

  it("re-encrypts webhook and hook secrets (current and previous) too; they still open", async () => {
    const auth = { authorization: `Bearer ${server.apiKey}` };
    const hook = (await (
      await fetch(`${server.url}/v1/projects/-/hooks`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ kind: "generic", name: "rotating" }),
      })
    ).json()) as { hook: { id: string }; secret: string };
    const rotated = (await (
      await fetch(`${server.url}/v1/projects/-/hooks/${hook.hook.id}/rotate-secret`, {
        method: "POST",
        headers: auth,
        body: "{}",
      })
    ).json()) as { secret: string };
    const ring = new PushTokenKeyRing(
      [{ id: "k4", key: Buffer.alloc(32, 4) }, ...testTokenKeys.keys],
      Buffer.alloc(32, 9),
    );
    const done = await reencryptSecrets(server.orm, ring);
    expect(done).toEqual({ changed: 2, unopenable: 0 });
    const [row] = await sql<{ secret_key_id: string; previous_key_id: string }>(
      server.databaseUrl,
      "select secret_key_id, previous_key_id from hook where id = $1",
      [hook.hook.id],
    );
    expect(row).toEqual({ secret_key_id: "k4", previous_key_id: "k4" });
    // Only the new key is needed now: both secrets still open.
    const newOnly = new PushTokenKeyRing(
      [{ id: "k4", key: Buffer.alloc(32, 4) }],
      Buffer.alloc(32, 9),
    );
    const called = await new HookRepository(server.orm, newOnly).called(hook.hook.id);
    expect(called?.secrets).toEqual([rotated.secret, hook.secret]);
    expect(await reencryptSecrets(server.orm, ring)).toEqual({ changed: 0, unopenable: 0 });
  });
});
