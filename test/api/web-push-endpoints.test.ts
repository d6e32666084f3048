/**
 * Web Push endpoints cannot reach into the server's own network: only the push services' hosts
 * are accepted, names that resolve to private addresses are refused at registration, and the
 * worker's connections refuse them again (DNS rebinding), with a generic error the account sees.
 */
import { createServer, type Socket } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { loadConfig } from "../../src/config.ts";
import { DeviceRepository } from "../../src/db/repositories/devices.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { publicError } from "../../src/errors.ts";
import { failure } from "../helpers/http.ts";
import {
  defaultTestSenders,
  notify,
  ownerPassword,
  startServer,
  type TestServer,
  testTokenKeys,
} from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let door: ReturnType<typeof createServer>;
const connections: Socket[] = [];
let port = 0;

beforeAll(async () => {
  door = createServer((s) => {
    connections.push(s);
    s.destroy();
  });
  await new Promise<void>((r) => door.listen(0, "127.0.0.1", r));
  port = (door.address() as { port: number }).port;
  const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:owner@example.com" };
  server = await startServer(
    {
      webPushHosts: [...loadConfig({}).webPushHosts, "127.0.0.1", "localhost"],
      webPushAllowPrivate: false,
    },
    [...defaultTestSenders().filter((s) => s.platform !== "web"), createWebPushSender({ vapid })],
  );
});
afterAll(async () => {
  await server.close();
  door.close();
});

async function webDevice() {
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
  );
  const { deviceCredential, device } = await devices.signInDevice({
    method: { case: "password", value: { email: "owner@example.com", password: ownerPassword } },
    name: "browser",
    platform: "web",
  });
  const register = (endpoint: string) =>
    devices.registerChannel(
      {
        channel: {
          case: "webPush",
          value: { endpoint, p256dh: "BPublicKeyMaterial", auth: "authSecret" },
        },
      },
      { headers: { authorization: `Bearer ${deviceCredential}` } },
    );
  return { id: device?.id as string, register };
}

describe("registering a Web Push endpoint", () => {
  it("refuses hosts that are not push services, and addresses on the server's network", async () => {
    const d = await webDevice();
    for (const [endpoint, why] of [
      ["https://evil.example.com/push", /push service/],
      [`https://127.0.0.1:${port}/push`, /private, loopback or link-local/],
      [`https://localhost:${port}/push`, /resolves to a private, loopback or link-local address/],
    ] as const) {
      const f = publicError(await failure(d.register(endpoint)));
      expect(f.violations, endpoint).toEqual([
        { field: "web_push.endpoint", message: expect.stringMatching(why) },
      ]);
    }
    expect(connections).toHaveLength(0);
  });
});

describe("the worker", () => {
  it("does not connect to a name that now resolves to a private address, and says only that it failed", async () => {
    const d = await webDevice();
    // As if the name resolved to a public address at registration and to 127.0.0.1 now.
    const endpoint = `https://localhost:${port}/push/abcd`;
    await new DeviceRepository(server.orm, testTokenKeys).registerChannel(
      d.id,
      JSON.stringify({
        endpoint,
        keys: { p256dh: webpush.generateVAPIDKeys().publicKey, auth: "c2VjcmV0c2VjcmV0MTIzNA" },
      }),
      endpoint.slice(-4),
    );
    const res = await notify(server, { title: "probe" });
    const state = async () =>
      (await (
        await fetch(`${server.url}/v1/notifications/${res.json.id}`, {
          headers: { authorization: `Bearer ${server.apiKey}` },
        })
      ).json()) as {
        device_deliveries: { device_id: string; last_error: string; attempts: number }[];
      };
    // The attempt is counted when the delivery is claimed and its error written when it is
    // settled: wait for the settled attempt, not the claim.
    await waitFor(
      async () => !!(await state()).device_deliveries.find((x) => x.device_id === d.id)?.last_error,
    );
    const mine = (await state()).device_deliveries.find((x) => x.device_id === d.id);
    expect(mine?.last_error).toBe("web push: the push service could not be reached");
    expect(connections).toHaveLength(0);
  });
});
