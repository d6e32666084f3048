/**
 * Caps per account and per project (issue 21, point 2): each refusal is 409 `limit_exceeded`
 * naming the limit and its value; each holds across two processes on one database and under
 * concurrent requests; what is removed makes room again.
 */
import type { ConnectError } from "@connectrpc/connect";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { type LimitName, limitTable } from "../../src/domain/limits.ts";
import { sql } from "../helpers/db.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import {
  notify,
  ownerPassword,
  startPeer,
  startServer,
  type TestServer,
  testLimits,
} from "../helpers/server.ts";
import { listen, signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

const caps = {
  apiKeysPerProject: 3,
  webhooksPerProject: 2,
  cliTokensPerAccount: 2,
  devicesPerAccount: 4,
  scheduledPerProject: 2,
  streamsPerDevice: 1,
  streamsPerAccount: 2,
  longPollsPerAccount: 1,
};
const settings = { webhookAllowPrivate: true, limits: { ...testLimits, ...caps } };
let server: TestServer;
/** The owner's CLI token: one of the account's CLI tokens. */
let token: string;
let peer: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await startServer(settings);
  peer = await startPeer(server, settings);
  const login = await cliToken(server.url);
  expect(login.status).toBe(201);
  token = login.json.token as string;
});
afterAll(async () => {
  await peer.close();
  await server.close();
});

async function call(
  base: string,
  path: string,
  init: { method?: string; body?: unknown; key?: string } = {},
) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${init.key ?? server.apiKey}` },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, json: (await body(res)) as JsonBody };
}

/** The refusal of a request past `limit`. */
function expectRefused(r: { status: number; json: JsonBody }, limit: LimitName) {
  expect(r.status, JSON.stringify(r.json)).toBe(409);
  expect(r.json).toMatchObject({
    code: "limit_exceeded",
    limit,
    value: caps[limit as keyof typeof caps],
  });
  expect(r.json.detail).toContain(limitTable[limit].env);
}

interface Device {
  credential: string;
  id: string;
}
const devices: Device[] = [];

const openCalls = async (kind: string) =>
  Number(
    (
      await sql<{ n: string }>(
        server.databaseUrl,
        "select count(*) n from open_call where kind = $1 and alive_until > now()",
        [kind],
      )
    )[0]?.n,
  );
const openStreams = () => openCalls("stream");

/** How a stream that should be refused ends: its code and limit. */
async function refusal(base: string, credential: string): Promise<string> {
  const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: base }));
  try {
    for await (const _ of inbox.subscribe(
      {},
      { headers: { authorization: `Bearer ${credential}` } },
    )) {
      return "opened";
    }
    return "ended";
  } catch (err) {
    const info = (err as ConnectError).findDetails(ErrorInfoSchema)[0];
    return `${info?.reason}:${info?.metadata.limit}`;
  }
}

async function cliToken(base: string) {
  return call(base, "/v1/auth/login", {
    body: { email: "owner@example.com", password: ownerPassword, token_name: "laptop" },
  });
}

describe("caps", () => {
  it("API keys per project, under concurrent requests on two processes; a revoked one makes room", async () => {
    // The bootstrap key is one of the project's.
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(i % 2 ? peer.url : server.url, `/v1/projects/${server.projectId}/api-keys`, {
          body: { name: `k${i}`, scopes: ["write"] },
          key: token,
        }),
      ),
    );
    const created = made.filter((r) => r.status === 201);
    expect(created).toHaveLength(caps.apiKeysPerProject - 1);
    expectRefused(
      made.find((r) => r.status !== 201) as { status: number; json: JsonBody },
      "apiKeysPerProject",
    );
    const id = ((created[0] as { json: JsonBody }).json.api_key as JsonBody).id;
    const revoked = await call(server.url, `/v1/api-keys/${id}`, { method: "DELETE", key: token });
    expect(revoked.status).toBe(200);
    const again = await call(peer.url, `/v1/projects/${server.projectId}/api-keys`, {
      body: { name: "again", scopes: ["read"] },
      key: token,
    });
    expect(again.status).toBe(201);
  });

  it("webhook endpoints per project", async () => {
    for (let i = 0; i < caps.webhooksPerProject; i++) {
      const r = await call(i % 2 ? peer.url : server.url, "/v1/webhooks", {
        body: { url: `http://127.0.0.1:9/h${i}`, event_types: ["notification.created"] },
      });
      expect(r.status).toBe(200);
    }
    expectRefused(
      await call(server.url, "/v1/webhooks", {
        body: { url: "http://127.0.0.1:9/more", event_types: ["notification.created"] },
      }),
      "webhooksPerProject",
    );
  });

  it("CLI tokens per account", async () => {
    // The owner's token of beforeAll is the first.
    expect((await cliToken(peer.url)).status).toBe(201);
    expectRefused(await cliToken(server.url), "cliTokensPerAccount");
  });

  it("devices per account; one signed out makes room", async () => {
    for (let i = 0; i < caps.devicesPerAccount; i++) {
      devices.push(await signInStreamDevice(i % 2 ? peer.url : server.url, `d${i}`, [`cap-${i}`]));
    }
    const signIn = () =>
      call(server.url, "/v1/devices/sign-in", {
        body: {
          name: "one too many",
          platform: "stream",
          password: { email: "owner@example.com", password: ownerPassword },
        },
      });
    expectRefused(await signIn(), "devicesPerAccount");
    const last = devices.pop() as { credential: string };
    const out = await call(server.url, "/v1/device/sign-out", { body: {}, key: last.credential });
    expect(out.status).toBe(200);
    const again = await signIn();
    expect(again.status).toBe(201);
    devices.push({ credential: again.json.device_credential as string, id: "" });
  });

  it("live streams per device and per account, across processes", async () => {
    const [d0, d1, d2] = devices as [Device, Device, Device];
    const first = listen(server.url, d0.credential);
    await waitFor(async () => (await openStreams()) === 1);
    expect(await refusal(peer.url, d0.credential)).toBe("limit_exceeded:streamsPerDevice");
    const second = listen(peer.url, d1.credential);
    await waitFor(async () => (await openStreams()) === 2);
    expect(await refusal(server.url, d2.credential)).toBe("limit_exceeded:streamsPerAccount");
    await first.stop();
    await waitFor(async () => (await openStreams()) === 1);
    const third = listen(server.url, d2.credential);
    await waitFor(async () => (await openStreams()) === 2);
    await second.stop();
    await third.stop();
  });

  it("long polls per account", async () => {
    const n = await notify(server, {
      title: "Deploy?",
      actions: [{ id: "yes", label: "Deploy" }],
    });
    const id = n.json.id as string;
    const wait = (base: string, seconds: number) =>
      call(base, `/v1/notifications/${id}/response?timeout_seconds=${seconds}`);
    const holding = wait(server.url, 3);
    await waitFor(async () => (await openCalls("long_poll")) === 1);
    expectRefused(await wait(peer.url, 1), "longPollsPerAccount");
    expect((await holding).json.outcome).toBe("waiting");
    expect((await wait(peer.url, 1)).status).toBe(200);
  });

  it("notifications scheduled and not yet due, per project", async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    for (let i = 0; i < caps.scheduledPerProject; i++) {
      expect((await notify(server, { title: `later ${i}`, deliver_at: later })).status).toBe(202);
    }
    const r = await notify(server, { title: "one too many", deliver_at: later });
    expectRefused({ status: r.status, json: r.json }, "scheduledPerProject");
    // Now-due publishes are not scheduled ones.
    expect((await notify(server, { title: "now" })).status).toBe(202);
  });
});
