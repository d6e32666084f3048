/**
 * `npm start`'s build encrypts a Web Push fan-out on its encryption thread (the thread's own
 * entry in dist/server, web-push-encryptor.ts): every browser gets a message it decrypts, the
 * server says the thread started and never that it failed, and it stops cleanly with the
 * thread running.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { testCertificate } from "../fakes/tls.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { freshDatabase } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { testTokenKeys } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let fake: FakeWebPush;
beforeAll(async () => {
  fake = await startFakeWebPush();
});
afterAll(async () => fake.close());

const vapid = webpush.generateVAPIDKeys();

describe("the build's Web Push encryption thread", () => {
  it("encrypts a fan-out to eight browsers, each decrypting its message", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-web-thread-"));
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, (await testCertificate()).cert);
    const password = "thread test password";
    const herald = await spawnHerald({
      DATABASE_URL: await freshDatabase(),
      HERALD_BOOTSTRAP: "1",
      HERALD_OWNER_EMAIL: "thread@example.com",
      HERALD_OWNER_PASSWORD: password,
      HERALD_DATA_DIR: dir,
      HERALD_LOG_LEVEL: "debug",
      HERALD_VAPID_PUBLIC_KEY: vapid.publicKey,
      HERALD_VAPID_PRIVATE_KEY: vapid.privateKey,
      HERALD_WEB_PUSH_HOSTS: "127.0.0.1",
      HERALD_WEB_PUSH_ALLOW_PRIVATE: "1",
      NODE_EXTRA_CA_CERTS: caFile,
      HERALD_TOKEN_KEYS: testTokenKeys.keys
        .map((k) => `${k.id}:${k.key.toString("base64")}`)
        .join(","),
      HERALD_TOKEN_INDEX_KEY: Buffer.alloc(32, 9).toString("base64"),
    });
    const apiKey = await waitForKey(herald);
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: herald.url, httpVersion: "1.1" }),
    );
    const subs = [];
    for (let i = 0; i < 8; i++) {
      const { deviceCredential } = await devices.signInDevice({
        method: { case: "password", value: { email: "thread@example.com", password } },
        name: `browser ${i}`,
        platform: "web",
      });
      const sub = fake.subscribe();
      subs.push(sub);
      await devices.registerChannel(
        {
          channel: {
            case: "webPush",
            value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
          },
        },
        { headers: { authorization: `Bearer ${deviceCredential}` } },
      );
    }
    const res = await fetch(`${herald.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ title: "to every browser" }),
    });
    const { id } = await body(res);
    // The fake decrypts each message as it arrives, with the subscription's private key.
    await waitFor(() => fake.received.filter((r) => r.payload.id === id).length === 8, 20_000);
    const got = fake.received.filter((r) => r.payload.id === id);
    expect(new Set(got.map((r) => r.subscription))).toEqual(new Set(subs.map((s) => s.id)));
    expect(got.every((r) => r.payload.title === "to every browser")).toBe(true);
    expect(herald.stdout()).toMatch(/Web Push's encryption thread started/);
    expect(herald.stdout() + herald.stderr()).not.toMatch(
      /encryption thread (did not start|failed)/,
    );
    herald.child.kill("SIGTERM");
    expect(await herald.exited).toBe(0);
  }, 60_000);
});
