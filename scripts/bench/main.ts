/**
 * `npm run bench`: starts PostgreSQL (embedded, durable settings; or DATABASE_URL), fake APNs,
 * FCM and Web Push, and the server in its own process; measures publish throughput and latency
 * over REST, gRPC and Connect, end-to-end delivery to a stream device, fan-out to 1,000 devices,
 * provider throughput, and the machine's own limits; writes .bench/results.{md,json}.
 *
 *   npm run bench                 full run (a few minutes)
 *   npm run bench -- --smoke      seconds-long run that only checks the benchmark works (CI)
 *
 * It stays whole for now, over the house's 300 lines: its scenarios share the module's state (the
 * server, the database, the fakes, the rows of the report) set up at top level, and issue 24
 * rebuilds the benchmark around a pgbench yardstick; that is when it splits by scenario, as
 * processes.ts already did.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import autocannon from "autocannon";
import { type LoadTestResult, loadTest } from "loadtest";
import pg from "pg";
import webpush from "web-push";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { NotifyRequestSchema, NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { createDatabaseIfMissing, startEmbeddedPostgres } from "../../src/db/embedded/server.ts";
import { createApnsSender } from "../../src/delivery/senders/apns.ts";
import { digestCredential, displayPrefix, mintCredential } from "../../src/domain/credentials.ts";
import { uuidv7 } from "../../src/domain/ids.ts";
import {
  generateKeyMaterial,
  PushTokenKeyRing,
  parseKeyList,
} from "../../src/domain/push-token-crypto.ts";
import { startFakeApns } from "../../test/fakes/apns-server.ts";
import { startFakeFcm } from "../../test/fakes/fcm-server.ts";
import { testCertificate } from "../../test/fakes/tls.ts";
import { startFakeWebPush } from "../../test/fakes/web-push-server.ts";
import { restMaxWithProcesses } from "./processes.ts";
import { rawGrpcCaller } from "./raw-grpc.ts";
import { drive, type Summary, summarize } from "./stats.ts";

const smoke = process.argv.includes("--smoke");
/** `--only N[,M…]` runs only those scenarios (and the setup they need). */
const onlyArg = process.argv.indexOf("--only");
const only = onlyArg > 0 ? (process.argv[onlyArg + 1] ?? "").split(",").map(Number) : undefined;
const want = (n: number) => only === undefined || only.includes(n);
const secs = (full: number) => (smoke ? 1 : full);
const root = resolve(import.meta.dirname, "../..");
const outDir = join(root, ".bench");
const work = mkdtempSync(join(os.tmpdir(), "herald-bench-"));
const log = (s: string) => process.stderr.write(`${s}\n`);
const rows: { scenario: string; result: string }[] = [];
const json: Record<string, unknown> = {};
const record = (scenario: string, result: string, data: unknown) => {
  rows.push({ scenario, result });
  json[scenario] = data;
  log(`  ${scenario}: ${result}`);
};
const fmt = (s: Summary) =>
  `${s.perSecond}/s, p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms, errors ${s.errors}`;

// --- infrastructure -------------------------------------------------------------------------
log("starting PostgreSQL, fake providers and the server…");
let serverUrl: string;
let stopPg = async () => {};
if (process.env.DATABASE_URL) {
  const u = new URL(process.env.DATABASE_URL);
  u.pathname = "";
  serverUrl = u.toString().replace(/\/$/, "");
} else {
  // Durable settings, as in production: fsync and synchronous_commit stay on.
  const embedded = await startEmbeddedPostgres({
    dir: work,
    flags: ["-c", "max_connections=200"],
  });
  serverUrl = embedded.serverUrl;
  stopPg = embedded.stop;
}
const database = `herald_bench_${process.pid}`;
await createDatabaseIfMissing(`${serverUrl}/postgres`, database);
const databaseUrl = `${serverUrl}/${database}`;

const [apns, fcm, webPush] = await Promise.all([
  startFakeApns(),
  startFakeFcm(),
  startFakeWebPush(),
]);
const caFile = join(work, "ca.pem");
writeFileSync(caFile, (await testCertificate()).cert);
const apnsKeyFile = join(work, "apns.p8");
writeFileSync(apnsKeyFile, apns.signingKey);
const vapid = webpush.generateVAPIDKeys();
const keyMaterial = generateKeyMaterial();
const ring = new PushTokenKeyRing(
  parseKeyList(keyMaterial.keys),
  Buffer.from(keyMaterial.indexKey, "base64"),
);
const password = "benchmark password";

// BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=…" profiles the server under load.
const serverArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);
const child: ChildProcess = spawn(
  process.execPath,
  [...serverArgs, join(root, "scripts/bench/server.ts")],
  {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HERALD_DATA_DIR: join(work, "data"),
      HERALD_LOG_LEVEL: process.env.BENCH_SERVER_LOG_LEVEL ?? "warn",
      HERALD_RATE_LIMIT_BURST: "1000000",
      HERALD_RATE_LIMIT_PER_SECOND: "1000000",
      HERALD_ACCOUNT_RATE_BURST: "1000000",
      HERALD_ACCOUNT_RATE_PER_SECOND: "1000000",
      HERALD_MONTHLY_QUOTA: "1000000000",
      HERALD_DB_POOL_SIZE: "20",
      HERALD_TOKEN_KEYS: keyMaterial.keys,
      HERALD_TOKEN_INDEX_KEY: keyMaterial.indexKey,
      BENCH_PASSWORD: password,
      BENCH_CA_FILE: caFile,
      BENCH_APNS_ORIGIN: apns.origin,
      BENCH_APNS_TEAM: apns.teamId,
      BENCH_APNS_KEY_ID: apns.keyId,
      BENCH_APNS_KEY_FILE: apnsKeyFile,
      BENCH_FCM_PORT: String(fcm.port),
      BENCH_FCM_SERVICE_ACCOUNT: fcm.serviceAccountFile,
      BENCH_VAPID_PUBLIC: vapid.publicKey,
      BENCH_VAPID_PRIVATE: vapid.privateKey,
    },
    stdio: ["ignore", "pipe", "inherit"],
  },
);
const { url, apiKey } = await new Promise<{ url: string; apiKey: string }>((resolveUrl, reject) => {
  let buf = "";
  child.stdout?.on("data", (c: Buffer) => {
    // The server's own log lines (warnings and errors) are shown; the first JSON line is ours.
    if (buf.includes("\n")) process.stderr.write(c);
    buf += c.toString();
    const line = buf.split("\n").find((l) => l.startsWith("{"));
    if (line) resolveUrl(JSON.parse(line));
  });
  child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
});
const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
const auth = { authorization: `Bearer ${apiKey}` };

async function cleanup() {
  child.kill("SIGTERM");
  // The server drains for up to its grace period (10 s); a server that does not stop by then is
  // a bug worth seeing, and must not leave the benchmark hanging.
  const killer = setTimeout(() => {
    log("the server did not stop 20 s after SIGTERM; killing it");
    child.kill("SIGKILL");
  }, 20_000);
  await new Promise((r) => child.once("exit", r));
  clearTimeout(killer);
  await db.end();
  await Promise.all([apns.close(), fcm.close(), webPush.close()]);
  const admin = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await admin.connect();
  if (!process.env.BENCH_KEEP_DB)
    await admin.query(`drop database if exists "${database}" with (force)`);
  await admin.end();
  await stopPg();
  rmSync(work, { recursive: true, force: true });
}

/**
 * gRPC (10 connections × 10 streams) and REST over HTTP/1.1 (50 connections) at full speed with
 * h2load (nghttp2), when it is installed; it is optional, so the row says how to get it.
 */
function h2loadMax(): { result: string; data: unknown } {
  if (spawnSync("h2load", ["--version"]).status !== 0) {
    return {
      result: "skipped: h2load is not installed (apt-get install nghttp2-client)",
      data: null,
    };
  }
  const message = toBinary(
    NotifyRequestSchema,
    create(NotifyRequestSchema, { title: "Deploy finished", priority: "high", topic: "bench" }),
  );
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const grpcBody = join(work, "notify.grpc");
  writeFileSync(grpcBody, frame);
  const restBody = join(work, "notify.json");
  writeFileSync(
    restBody,
    JSON.stringify({ title: "Deploy finished", priority: "high", topic: "bench" }),
  );
  const run = (args: string[]) => {
    const out = execFileSync(
      "h2load",
      ["-D", String(secs(10)), "-H", `authorization: ${auth.authorization}`, ...args],
      { encoding: "utf8" },
    );
    const rate = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1]);
    const codes = /status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
    const failed = /(\d+) failed, (\d+) errored/.exec(out);
    const errors = [codes?.[1], codes?.[2], codes?.[3], failed?.[2]].reduce(
      (sum, n) => sum + Number(n ?? 0),
      0,
    );
    const mean = /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1];
    return { perSecond: Math.round(rate), errors, meanLatency: mean };
  };
  const grpc = run([
    "-c",
    "10",
    "-m",
    "10",
    "-d",
    grpcBody,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    `${url}/herald.v1.NotifyService/Notify`,
  ]);
  const rest = run([
    "--h1",
    "-c",
    "50",
    "-m",
    "1",
    "-d",
    restBody,
    "-H",
    "content-type: application/json",
    `${url}/v1/notify`,
  ]);
  return {
    result: `gRPC ${grpc.perSecond}/s (mean ${grpc.meanLatency}, errors ${grpc.errors}), REST ${rest.perSecond}/s (mean ${rest.meanLatency}, errors ${rest.errors})`,
    data: { grpc, rest },
  };
}

/**
 * Waits until the delivery worker has fanned out everything earlier scenarios published, so
 * that a latency scenario does not queue behind their backlog; says how long that took.
 */
async function quiesce(): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; i < 600; i++) {
    const { rows } = await db.query<{ n: number }>(
      "select count(*)::int as n from notification where status = 'queued'",
    );
    if (rows[0]?.n === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const ms = Math.round(performance.now() - t0);
  if (ms > 200)
    log(`    (waited ${ms} ms for the worker to fan out earlier scenarios' notifications)`);
}

let restMax = Number.NaN;
let commitRate = Number.NaN;
try {
  if (want(1)) {
    // --- 1. publish over REST ---------------------------------------------------------------
    log("1. publish over REST (autocannon)");
    const cannon = (opts: { connections: number; rate?: number; seconds: number }) =>
      autocannon({
        url: `${url}/v1/notify`,
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "Deploy finished", priority: "high", topic: "bench" }),
        connections: opts.connections,
        duration: opts.seconds,
        ...(opts.rate ? { overallRate: opts.rate } : {}),
      });
    await cannon({ connections: 10, seconds: secs(3) }); // warm-up
    // Fixed rates with loadtest: it sends at even intervals (an open loop). autocannon's rate
    // limit is not that: each connection sends its whole per-second quota back to back at the
    // top of every second, so "500/s" arrives as bursts of 500 at full speed, and it pads the
    // histogram with synthetic samples for each slow answer.
    for (const rate of [200, 500, 1000]) {
      const r = await new Promise<LoadTestResult>((done, fail) =>
        loadTest(
          {
            url: `${url}/v1/notify`,
            method: "POST",
            headers: auth,
            contentType: "application/json",
            body: JSON.stringify({ title: "Deploy finished", priority: "high", topic: "bench" }),
            requestsPerSecond: rate,
            maxSeconds: secs(10),
            agentKeepAlive: true,
            quiet: true,
          },
          (err: Error | null, result: LoadTestResult) => (err ? fail(err) : done(result)),
        ),
      );
      const s = {
        perSecond: r.rps,
        p50: r.percentiles[50],
        p90: r.percentiles[90],
        p99: r.percentiles[99],
        errors: r.totalErrors,
      };
      record(
        `REST publish at ${rate}/s offered`,
        `${s.perSecond}/s, p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms, errors ${s.errors}`,
        s,
      );
    }
    const max = await cannon({ connections: 50, seconds: secs(10) });
    restMax = Math.round(max.requests.average);
    record(
      "REST publish, maximum (50 connections)",
      `${restMax}/s, p50 ${max.latency.p50} ms, p99 ${max.latency.p99} ms, errors ${max.non2xx + max.errors}`,
      { perSecond: restMax, p50: max.latency.p50, p99: max.latency.p99 },
    );
  }
  if (want(2)) {
    // --- 2. publish over gRPC and Connect ---------------------------------------------------
    log("2. publish over gRPC and Connect (generated client)");
    const request = { title: "Deploy finished", priority: "high", topic: "bench" };
    const generated = (transport: Transport) => {
      const client = createClient(NotifyService, transport);
      return async () => {
        await client.notify(request, { headers: auth });
      };
    };
    const raw = rawGrpcCaller(url, "/herald.v1.NotifyService/Notify", auth);
    const message = toBinary(NotifyRequestSchema, create(NotifyRequestSchema, request));
    for (const [name, call] of [
      ["gRPC", generated(createGrpcTransport({ baseUrl: url }))],
      ["Connect", generated(createConnectTransport({ baseUrl: url, httpVersion: "1.1" }))],
      ["gRPC (bare HTTP/2 client)", () => raw.call(message)],
    ] as const) {
      await drive(call, { seconds: secs(2), concurrency: 10 });
      record(
        `${name} publish at 500/s offered`,
        fmt(await drive(call, { seconds: secs(10), concurrency: 50, rate: 500 })),
        null,
      );
      const s = await drive(call, { seconds: secs(10), concurrency: 50 });
      record(`${name} publish, maximum (50 concurrent)`, fmt(s), s);
    }
    raw.close();
    // The generated client costs CPU on the cores the server uses, more than autocannon does.
    // To compare the server's gRPC and REST paths alone, one C load generator drives both.
    const h2 = h2loadMax();
    record("gRPC vs REST, maximum, both driven by h2load", h2.result, h2.data);
  }
  if (want(3)) {
    // --- 3. end to end: publish → stream device ---------------------------------------------
    log("3. end to end: publish → stream device");
    await quiesce();
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
    );
    const stream = await devices.signInDevice({
      method: { case: "password", value: { email: "bench@example.com", password } },
      name: "bench stream",
      platform: "stream",
    });
    const deviceAuth = { authorization: `Bearer ${stream.deviceCredential}` };
    await devices.setTopicFilter({ topics: ["e2e"] }, { headers: deviceAuth });
    const sentAt = new Map<string, number>();
    const e2e: number[] = [];
    const abort = new AbortController();
    const inbox = createClient(
      InboxService,
      createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
    );
    const listening = (async () => {
      try {
        for await (const m of inbox.subscribe({}, { headers: deviceAuth, signal: abort.signal })) {
          if (m.event.case !== "notification") continue;
          const t = sentAt.get(m.event.value.title);
          if (t !== undefined) e2e.push(performance.now() - t);
        }
      } catch {
        // aborted at the end
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    const publisher = createClient(NotifyService, createGrpcTransport({ baseUrl: url }));
    let seq = 0;
    await drive(
      async () => {
        const title = `e2e ${seq++}`;
        sentAt.set(title, performance.now());
        await publisher.notify({ title, topic: "e2e" }, { headers: auth });
      },
      { seconds: secs(10), concurrency: 20, rate: 200 },
    );
    await new Promise((r) => setTimeout(r, 1500));
    abort.abort();
    await listening;
    const e2eSummary = summarize(e2e, sentAt.size - e2e.length, secs(10));
    record(
      "end to end at 200/s: publish → stream device",
      `received ${e2e.length}/${sentAt.size}, p50 ${e2eSummary.p50} ms, p90 ${e2eSummary.p90} ms, p99 ${e2eSummary.p99} ms`,
      e2eSummary,
    );
  }
  if (want(4)) {
    // --- 4. fan-out to 1,000 devices ---------------------------------------------------------
    log("4. fan-out to 1,000 devices across fake APNs, FCM and Web Push");
    await quiesce();
    const fanDevices = smoke ? 30 : 1000;
    const [{ account_id: accountId }] = (
      await db.query<{ account_id: string }>(
        "select account_id from project where is_default limit 1",
      )
    ).rows as [{ account_id: string }];
    for (let i = 0; i < fanDevices; i++) {
      const id = uuidv7();
      const platform = i % 10 < 4 ? "ios" : i % 10 < 7 ? "android" : "web";
      let token: string;
      if (platform === "ios") token = i.toString(16).padStart(64, "0");
      else if (platform === "android") token = `fcm-bench-${i}:APA91b${"x".repeat(20)}`;
      else {
        const s = webPush.subscribe();
        token = JSON.stringify({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } });
      }
      const credential = mintCredential("device");
      const sealed = ring.seal(token, id);
      await db.query(
        `insert into device (id, account_id, name, platform, credential_digest, credential_prefix,
                           token_key_id, token_box, token_index, token_last4, topics)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '{fanout}')`,
        [
          id,
          accountId,
          `bench ${i}`,
          platform,
          digestCredential(credential),
          displayPrefix(credential),
          sealed.keyId,
          sealed.box,
          ring.blindIndex(platform, token),
          token.slice(-4),
        ],
      );
    }
    // The publish path is warm (a publish no fan-out device's filter admits); the providers'
    // connections are not, the first time: the first fan-out opens them, the second reuses them.
    await fetch(`${url}/v1/notify`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ title: "warm-up", topic: "warm-up" }),
    }).then((r) => r.arrayBuffer());
    for (const round of ["new", "kept-alive"]) {
      const apnsBefore = apns.received.length;
      const t0 = performance.now();
      const fanRes = await fetch(`${url}/v1/notify`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ title: `fan-out (${round})`, topic: "fanout" }),
      });
      const fanId = ((await fanRes.json()) as { id: string }).id;
      let fanMs = Number.NaN;
      for (let i = 0; i < 6000; i++) {
        const { rows: r } = await db.query<{ pending: number; total: number }>(
          "select count(*) filter (where state = 'pending')::int as pending, count(*)::int as total from delivery where notification_id = $1",
          [fanId],
        );
        if (r[0] && r[0].total === fanDevices && r[0].pending === 0) {
          fanMs = performance.now() - t0;
          break;
        }
        await new Promise((res) => setTimeout(res, 5));
      }
      const { rows: states } = await db.query<{ state: string; n: number }>(
        "select state, count(*)::int as n from delivery where notification_id = $1 group by state",
        [fanId],
      );
      const { rows: perPlatform } = await db.query(
        `select d.platform, count(*)::int as n, max(d.attempts)::int as max_attempts,
              round(extract(epoch from min(d.sent_at) - n.created_at) * 1000)::int as first_sent_ms,
              round(extract(epoch from max(d.sent_at) - n.created_at) * 1000)::int as last_sent_ms,
              round(extract(epoch from min(d.created_at) - n.created_at) * 1000)::int as fanned_out_ms
         from delivery d join notification n on n.id = d.notification_id
        where d.notification_id = $1 group by d.platform, n.created_at`,
        [fanId],
      );
      log(`    per platform: ${JSON.stringify(perPlatform)}`);
      record(
        `fan-out to ${fanDevices} devices, ${round} provider connections`,
        `all settled in ${Math.round(fanMs)} ms (${states.map((s) => `${s.n} ${s.state}`).join(", ")}; APNs fake saw ${apns.received.length - apnsBefore})`,
        { ms: fanMs, states },
      );
    }

    const thread = new Worker(new URL("./apns-thread.ts", import.meta.url));
    const remote = await new Promise<{
      origin: string;
      ca: string;
      teamId: string;
      keyId: string;
      signingKey: string;
    }>((r) => thread.once("message", r));
    const sender = createApnsSender({
      teamId: remote.teamId,
      keyId: remote.keyId,
      signingKey: remote.signingKey,
      bundleId: "dev.herald.bench",
      sandbox: false,
      endpoint: { origin: remote.origin, ca: remote.ca },
    });
    const pushes = smoke ? 100 : 5000;
    let n = 0;
    const tp = performance.now();
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (n < pushes) {
          const i = n++;
          const result = await sender.send(
            {
              notificationId: uuidv7(),
              topic: "t",
              title: "throughput",
              message: "m",
              priority: "high",
              click_url: null,
              expiresAt: new Date(Date.now() + 60_000),
              hasTtl: true,
            },
            i.toString(16).padStart(64, "f"),
          );
          if (result.kind !== "ok") throw new Error(`APNs push failed: ${JSON.stringify(result)}`);
        }
      }),
    );
    const pushRate = Math.round(pushes / ((performance.now() - tp) / 1000));
    await sender.close();
    thread.postMessage("count");
    const seen = await new Promise<number>((r) => thread.once("message", r));
    thread.postMessage("close");
    await new Promise((r) => thread.once("exit", r));
    if (seen !== pushes) throw new Error(`the fake APNs saw ${seen} of ${pushes} pushes`);
    record(
      "APNs sender throughput (HTTP/2 to the fake in its own thread, 100 concurrent)",
      `${pushRate} pushes/s`,
      {
        pushesPerSecond: pushRate,
      },
    );
  }
  if (want(5)) {
    // --- 5. the machine's limits ---------------------------------------------------------------
    log("5. the machine's limits");
    const raw = new pg.Pool({ connectionString: databaseUrl, max: 20 });
    await raw.query(
      "create table if not exists bench_commit (like notification including defaults)",
    );
    const projectId = (await raw.query<{ id: string }>("select id from project limit 1")).rows[0]
      ?.id;
    const commit = async () => {
      await raw.query(
        `insert into bench_commit (id, project_id, topic, title, message, priority, status, created_at)
         values ($1, $2, 'bench', 'Deploy finished', '', 'high', 'queued', now())`,
        [uuidv7(), projectId],
      );
    };
    const commits = await drive(commit, { seconds: secs(10), concurrency: 50 });
    // Issue 11's yardstick: one transaction per request with two inserts (a notification and its
    // idempotency claim), 32 clients.
    const txPool = new pg.Pool({ connectionString: databaseUrl, max: 32 });
    const twoInserts = async () => {
      const c = await txPool.connect();
      try {
        await c.query("begin");
        for (let i = 0; i < 2; i++) {
          await c.query(
            `insert into bench_commit (id, project_id, topic, title, message, priority, status, created_at)
             values ($1, $2, 'bench', 'Deploy finished', '', 'high', 'queued', now())`,
            [uuidv7(), projectId],
          );
        }
        await c.query("commit");
      } finally {
        c.release();
      }
    };
    const transactions = await drive(twoInserts, { seconds: secs(10), concurrency: 32 });
    await txPool.end();
    commitRate = transactions.perSecond;
    record(
      "PostgreSQL: transactions of two inserts, one per request (32 clients)",
      `${transactions.perSecond}/s, p99 ${transactions.p99} ms`,
      transactions,
    );
    // The latency floor under Herald's fixed-rate publish: the same commits, at 500/s.
    const commitsAt500 = await drive(commit, { seconds: secs(10), concurrency: 50, rate: 500 });
    await raw.query("drop table bench_commit");
    await raw.end();
    record(
      "PostgreSQL: committed single-row inserts (50 concurrent)",
      `${commits.perSecond}/s, p99 ${commits.p99} ms`,
      commits,
    );
    record(
      "PostgreSQL: committed single-row inserts at 500/s offered",
      fmt(commitsAt500),
      commitsAt500,
    );
    // And under that, the disk: every commit waits for its WAL write to be flushed.
    const probe = join(work, "fsync-probe");
    const fd = openSync(probe, "w");
    const page = Buffer.alloc(8192, 1);
    const flushes: number[] = [];
    for (const end = performance.now() + secs(10) * 1000; performance.now() < end; ) {
      const t = performance.now();
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      flushes.push(performance.now() - t);
    }
    closeSync(fd);
    const disk = summarize(flushes, 0, secs(10));
    const slow = flushes.filter((ms) => ms > 25).length;
    const worst = Math.round(Math.max(...flushes));
    record(
      "disk: 8 KiB write + fdatasync, one after another",
      `${disk.perSecond}/s, p50 ${disk.p50} ms, p99 ${disk.p99} ms, max ${worst} ms, ${slow} over 25 ms`,
      { ...disk, max: worst, over25ms: slow },
    );
    const bare = spawn(
      process.execPath,
      [
        "-e",
        "const f=require('fastify')();f.post('/',async()=>({ok:true}));f.listen({port:0,host:'127.0.0.1'}).then(a=>console.log(a))",
      ],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
    );
    const bareUrl = await new Promise<string>((r) =>
      bare.stdout?.once("data", (c: Buffer) => r(c.toString().trim())),
    );
    const bareRun = await autocannon({
      url: bareUrl,
      method: "POST",
      body: "{}",
      connections: 50,
      duration: secs(10),
    });
    bare.kill();
    const bareRate = Math.round(bareRun.requests.average);
    record(
      "bare Fastify route from memory (50 connections)",
      `${bareRate}/s, p99 ${bareRun.latency.p99} ms`,
      { perSecond: bareRate },
    );
    record(
      "Herald REST publish as a share of the limits",
      `${Math.round((restMax / commits.perSecond) * 100)}% of PostgreSQL's single-row commit rate, ${(restMax / commitRate).toFixed(2)}× its two-insert transaction rate, ${Math.round((restMax / bareRate) * 100)}% of a bare Fastify route`,
      {
        ofCommits: restMax / commits.perSecond,
        ofTransactions: restMax / commitRate,
        ofFastify: restMax / bareRate,
      },
    );
  }
  if (want(6)) {
    // --- 6. npm start with 1 and 2 processes, and group commit's batch sizes ------------------
    log("6. npm start itself: REST maximum with 1 and 2 serving processes");
    for (const n of [1, 2]) {
      const r = await restMaxWithProcesses(root, serverUrl, n, secs(10), join(work, `data-p${n}`));
      const share = Number.isNaN(commitRate)
        ? ""
        : `; ${(r.perSecond / commitRate).toFixed(2)}× PostgreSQL's two-insert transaction rate`;
      record(
        `REST publish, maximum, npm start with ${n} process${n > 1 ? "es" : ""}`,
        `${r.perSecond}/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}${share}; memory of all its processes at that load: ${r.peakRssMb} MB; idle: supervisor ${r.idleRssMb.supervisor} MB, serving ${r.idleRssMb.serving.join(" + ")} MB; a killed serving process replaced and listening in ${r.replacementMs} ms`,
        r,
      );
      const total = r.batches["+Inf"] ?? 0;
      const dist = Object.entries(r.batches)
        .filter(([le]) => le !== "+Inf")
        .map(([le, c], i, all) => {
          const below = i > 0 ? (all[i - 1]?.[1] ?? 0) : 0;
          return `≤${le}: ${total ? Math.round(((c - below) / total) * 100) : 0}%`;
        })
        .join(", ");
      record(
        `group commit batch sizes at that maximum (${n} process${n > 1 ? "es" : ""})`,
        `mean ${r.meanBatch} publishes per commit; ${total} commits: ${dist}`,
        { mean: r.meanBatch, batches: r.batches },
      );
    }
  }
  // --- report --------------------------------------------------------------------------------
  const pgVersion = (await db.query<{ v: string }>("select current_setting('server_version') as v"))
    .rows[0]?.v;
  const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${pgVersion}${process.env.DATABASE_URL ? " (DATABASE_URL)" : " (embedded, fsync on)"}`;
  const md = [
    `# Herald benchmark, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC${smoke ? " (smoke run: numbers meaningless)" : ""}`,
    "",
    `Machine: ${machine}. Load generator on the same machine.`,
    "",
    "| scenario | result |",
    "|---|---|",
    ...rows.map((r) => `| ${r.scenario} | ${r.result} |`),
    "",
  ].join("\n");
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "results.md"), md);
  writeFileSync(
    join(outDir, "results.json"),
    `${JSON.stringify({ machine, smoke, results: json }, null, 2)}\n`,
  );
  process.stdout.write(md);
} finally {
  await cleanup();
}
