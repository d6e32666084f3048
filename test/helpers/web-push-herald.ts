/**
 * `npm start` with Web Push against the fake push service (test/fakes/web-push-server.ts): the
 * environment that makes the build trust the fake and send to it, and browsers signed in to it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import webpush from "web-push";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { testCertificate } from "../fakes/tls.ts";
import type { FakeWebPush } from "../fakes/web-push-server.ts";
import { testTokenKeys } from "./server.ts";
import { tempDir } from "./temp.ts";

/** The environment of a Herald whose owner is `email` and whose Web Push reaches the fake. */
export async function webPushHeraldEnv(
  email: string,
  password: string,
): Promise<Record<string, string>> {
  const dir = tempDir("herald-web-push-");
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, (await testCertificate()).cert);
  const vapid = webpush.generateVAPIDKeys();
  return {
    HERALD_BOOTSTRAP: "1",
    HERALD_OWNER_EMAIL: email,
    HERALD_OWNER_PASSWORD: password,
    HERALD_DATA_DIR: dir,
    HERALD_VAPID_PUBLIC_KEY: vapid.publicKey,
    HERALD_VAPID_PRIVATE_KEY: vapid.privateKey,
    // The fake push service listens on 127.0.0.1.
    HERALD_WEB_PUSH_HOSTS: "127.0.0.1",
    HERALD_WEB_PUSH_ALLOW_PRIVATE: "1",
    NODE_EXTRA_CA_CERTS: caFile,
    HERALD_TOKEN_KEYS: testTokenKeys.keys
      .map((k) => `${k.id}:${k.key.toString("base64")}`)
      .join(","),
    HERALD_TOKEN_INDEX_KEY: Buffer.alloc(32, 9).toString("base64"),
  };
}

/** `n` browsers of the owner, each signed in and subscribed at the fake; their subscriptions. */
export async function subscribeBrowsers(
  url: string,
  owner: { email: string; password: string },
  fake: FakeWebPush,
  n: number,
) {
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
  );
  const subs = [];
  for (let i = 0; i < n; i++) {
    const { deviceCredential } = await devices.signInDevice({
      method: { case: "password", value: owner },
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
  return subs;
}
