/**
 * A real Herald server for a test file: its own database, the real app on a real port.
 */
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll } from "vitest";
import webpush from "web-push";
import { buildApp } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { type Orm, openDatabase } from "../../src/db/orm.ts";
import { createApnsSender } from "../../src/delivery/senders/apns.ts";
import { createFcmSender } from "../../src/delivery/senders/fcm.ts";
import { type Sender, unconfiguredSender } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { digestCredential, displayPrefix, mintCredential } from "../../src/domain/credentials.ts";
import { uuidv7 } from "../../src/domain/ids.ts";
import { defaultLimits, type Limits } from "../../src/domain/limits.ts";
import { PushTokenKeyRing } from "../../src/domain/push-token-crypto.ts";
import { bootstrapIfEmpty } from "../../src/ops/bootstrap.ts";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";
import { startFakeFcm } from "../fakes/fcm-server.ts";
import { startFakeWebPush } from "../fakes/web-push-server.ts";
import { closeApp, traceCheckouts } from "./close.ts";
import { freshDatabase, sql } from "./db.ts";
import type { JsonBody } from "./http.ts";

/** A fixed key ring for tests (two keys, so rotation can be exercised). */
export const testTokenKeys = new PushTokenKeyRing(
  [
    { id: "k2", key: Buffer.alloc(32, 2) },
    { id: "k1", key: Buffer.alloc(32, 1) },
  ],
  Buffer.alloc(32, 9),
);

/** Silent, unless HERALD_TEST_LOG=1 asks for the server's errors (to see why a call failed). */
const testLogger = process.env.HERALD_TEST_LOG ? { level: "error" } : false;

/**
 * A server logger (startServer's last argument) that keeps every JSON line it writes at `level`
 * and above: `text()` all of it, `entries()` each line parsed.
 */
export function capturedLog(level: "debug" | "info") {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    logger: { level, stream },
    text: () => text,
    entries: () =>
      text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string } & Record<string, unknown>),
  };
}

/** The APNs sender pointed at a fake (bundle id `dev.herald.app`). */
function fakeApnsSender(apns: FakeApns): Sender {
  return createApnsSender({
    teamId: apns.teamId,
    keyId: apns.keyId,
    signingKey: apns.signingKey,
    bundleId: "dev.herald.app",
    sandbox: false,
    endpoint: { origin: apns.origin, ca: apns.ca },
  });
}

/**
 * A test file's server with APNs pointed at a fake: started before the file's tests, closed after
 * them. Read `server` and `apns` inside the tests.
 */
export function serverWithFakeApns(overrides: Partial<Config> = {}): {
  server: TestServer;
  apns: FakeApns;
} {
  const started = {} as { server: TestServer; apns: FakeApns };
  beforeAll(async () => {
    started.apns = await startFakeApns();
    started.server = await startServer(overrides, apnsTestSenders(started.apns));
  });
  afterAll(async () => {
    await started.server?.close();
    await started.apns?.close();
  });
  return started;
}

/** APNs pointed at a fake, the other platforms unconfigured. */
export function apnsTestSenders(apns: FakeApns): Sender[] {
  return [
    fakeApnsSender(apns),
    unconfiguredSender("android", "FCM is not configured"),
    unconfiguredSender("web", "Web Push is not configured"),
  ];
}

/** A server whose every platform points at its fake (APNs, FCM, Web Push), and the fakes. */
export async function startEveryPlatform() {
  const [apns, fcm, web] = await Promise.all([startFakeApns(), startFakeFcm(), startFakeWebPush()]);
  const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:ops@example.com" };
  const server = await startServer({}, [
    fakeApnsSender(apns),
    createFcmSender({ serviceAccountFile: fcm.serviceAccountFile, agent: fcm.agent }),
    createWebPushSender({ vapid, ca: web.ca, allowPrivate: true }),
  ]);
  const close = async () => {
    await server.close();
    await Promise.all([apns.close(), fcm.close(), web.close()]);
  };
  return { apns, fcm, web, server, close };
}

/** No provider configured: tests that push pass their own senders, pointed at fakes. */
export function defaultTestSenders(): Sender[] {
  return [
    unconfiguredSender("ios", "APNs is not configured"),
    unconfiguredSender("android", "FCM is not configured"),
    unconfiguredSender("web", "Web Push is not configured"),
  ];
}

/**
 * The limits tests run with: out of the way of tests about other things (a test of a limit sets
 * its own), but for the webhook sends' deadline and caps, which every webhook test keeps.
 */
export const testLimits: Limits = {
  ...defaultLimits,
  accountRequestBurst: 100_000,
  accountRequestsPerSecond: 100_000,
  apiKeysPerProject: 10_000,
  hooksPerProject: 10_000,
  webhooksPerProject: 10_000,
  cliTokensPerAccount: 10_000,
  devicesPerAccount: 10_000,
  scheduledPerProject: 1_000_000,
  streamsPerDevice: 10_000,
  streamsPerAccount: 10_000,
  longPollsPerAccount: 10_000,
  failedAuthPerMinute: 100_000,
};

/** The configuration tests run with: defaults, a free port, and limits out of the way. */
function testConfig(overrides: Partial<Config>, databaseUrl: string): Config {
  return {
    ...loadConfig({}),
    port: 0,
    // Generous by default so that tests about other things never trip the limiter.
    rateLimitBurst: 100_000,
    rateLimitPerSecond: 100_000,
    // Most test files sign accounts up; the closed default has its own test.
    signupEnabled: true,
    // The fake push service listens on 127.0.0.1; the endpoint rules have their own test.
    webPushHosts: [...loadConfig({}).webPushHosts, "127.0.0.1", "push.example.net"],
    webPushAllowPrivate: true,
    limits: testLimits,
    ...overrides,
    databaseUrl,
  };
}

/** The bootstrap account's password in tests. */
export const ownerPassword = "correct horse battery staple";

export interface TestServer {
  url: string;
  port: number;
  databaseUrl: string;
  /** A key with `write` and `read` on the bootstrap project. */
  apiKey: string;
  accountId: string;
  projectId: string;
  app: FastifyInstance;
  orm: Orm;
  close(): Promise<void>;
}

export async function startServer(
  overrides: Partial<Config> = {},
  senders: Sender[] = defaultTestSenders(),
  /** Rewrites the URL the server connects with (e.g. through a proxy); tests keep the real one. */
  connectVia: (databaseUrl: string) => string = (url) => url,
  /** The server's logger (default: silent, or errors with HERALD_TEST_LOG). */
  logger: NonNullable<Parameters<typeof buildApp>[0]["logger"]> = testLogger,
): Promise<TestServer> {
  const databaseUrl = await freshDatabase();
  const config = testConfig(overrides, connectVia(databaseUrl));
  const orm = await openDatabase({
    url: connectVia(databaseUrl),
    poolSize: config.dbPoolSize,
  });
  await traceCheckouts(orm);
  const boot = await bootstrapIfEmpty(orm, { email: "owner@example.com", password: ownerPassword });
  if (!boot) throw new Error("fresh database was not empty");
  const app = await buildApp({
    config,
    orm,
    tokenKeys: testTokenKeys,
    senders,
    logger,
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    databaseUrl,
    apiKey: boot.apiKey,
    accountId: boot.accountId,
    projectId: boot.projectId,
    app,
    orm,
    close: () => closeApp("server", app, orm, databaseUrl),
  };
}

/** Adds a project to the server's account (or another account) and a key for it. */
export async function addProjectWithKey(
  server: TestServer,
  opts: { scopes?: string[]; newAccount?: boolean; name?: string } = {},
): Promise<{ projectId: string; accountId: string; apiKey: string; keyId: string }> {
  let accountId = server.accountId;
  if (opts.newAccount) {
    accountId = uuidv7();
    await sql(server.databaseUrl, "insert into account (id, email) values ($1, $2)", [
      accountId,
      `${accountId}@example.com`,
    ]);
  }
  const projectId = uuidv7();
  await sql(server.databaseUrl, "insert into project (id, account_id, name) values ($1, $2, $3)", [
    projectId,
    accountId,
    opts.name ?? `p-${projectId}`,
  ]);
  const key = await addKey(server, projectId, opts.scopes ?? ["write", "read"]);
  return { projectId, accountId, ...key };
}

export async function addKey(
  server: TestServer,
  projectId: string,
  scopes: string[],
): Promise<{ apiKey: string; keyId: string }> {
  const apiKey = mintCredential("apiKey");
  const keyId = uuidv7();
  await sql(
    server.databaseUrl,
    `insert into api_key (id, project_id, name, secret_digest, display_prefix, scopes)
     values ($1, $2, 'test', $3, $4, $5)`,
    [keyId, projectId, digestCredential(apiKey), displayPrefix(apiKey), scopes],
  );
  return { apiKey, keyId };
}

/** POST /v1/notify with a raw body and headers; returns status, headers and parsed body. */
export async function notify(
  server: TestServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: JsonBody; text: string }> {
  const res = await fetch(`${server.url}/v1/notify`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${server.apiKey}`,
      "content-type": "application/json",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : {}, text };
}

/** A second server process's worth of app on the same database (own pool, hub and worker). */
export async function startPeer(
  server: TestServer,
  overrides: Partial<Config> = {},
  senders: Sender[] = defaultTestSenders(),
): Promise<{ url: string; close(): Promise<void> }> {
  const config = testConfig(overrides, server.databaseUrl);
  const orm = await openDatabase({ url: server.databaseUrl, poolSize: 5 });
  await traceCheckouts(orm);
  const app = await buildApp({
    config,
    orm,
    tokenKeys: testTokenKeys,
    senders,
    logger: testLogger,
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    close: () => closeApp("peer", app, orm, server.databaseUrl),
  };
}
