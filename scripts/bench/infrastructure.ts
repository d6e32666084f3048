/**
 * The benchmark's infrastructure, set up once when first imported: PostgreSQL (embedded, with
 * durable settings, or DATABASE_URL's server), fake APNs, FCM and Web Push, and the server in
 * its own process (scripts/bench/server.ts), with an API key. `cleanup` takes it all down.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import webpush from "web-push";
import { loadConfig } from "../../src/config.ts";
import { removeAbandoned } from "../../src/db/embedded/owner.ts";
import { createDatabaseIfMissing, startEmbeddedPostgres } from "../../src/db/embedded/server.ts";
import {
  generateKeyMaterial,
  PushTokenKeyRing,
  parseKeyList,
} from "../../src/domain/push-token-crypto.ts";
import { onInterrupt } from "../../src/ops/interrupt.ts";
import { servingHeapFlags } from "../../src/supervisor/pool.ts";
import { startFakeApns } from "../../test/fakes/apns-server.ts";
import { startFakeFcm } from "../../test/fakes/fcm-server.ts";
import { testCertificate } from "../../test/fakes/tls.ts";
import { startFakeWebPush } from "../../test/fakes/web-push-server.ts";
import { log, root, unlimited, work } from "./context.ts";
import { benchDatabases, dropBenchDatabase, running } from "./processes.ts";

// Stopped from outside (Ctrl-C, a closed terminal, a timeout, pkill: any ending signal) at any
// point (src/ops/interrupt.ts). Once set up, `cleanup` takes everything down. While it sets up,
// PostgreSQL is stopped if it is up (if it is still starting, its exit hook stops it), the
// scratch directory removed, and the server processes stop when their parent is gone. (main.ts
// installed its handler only after this setup: a SIGTERM during it left PostgreSQL running on a
// scratch directory that no later run looks at.)
let setUp = false;
onInterrupt(() =>
  setUp ? cleanup() : stopPg().then(() => rmSync(work, { recursive: true, force: true })),
);

/**
 * What earlier runs that were SIGKILLed left behind: PostgreSQL still running on a scratch
 * directory no run looks at again (the signal handler above cannot run on SIGKILL).
 * Each is stopped and its directory removed; another run's, while it lives, is left alone.
 */
async function sweepAbandoned(): Promise<void> {
  for (const dir of await removeAbandoned(tmpdir(), "herald-bench-")) {
    log(`removed what a killed benchmark left behind: ${dir}`);
  }
}

log("starting PostgreSQL, fake providers and the server…");
await sweepAbandoned();
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
export const databaseUrl = `${serverUrl}/${database}`;

export const [apns, fcm, webPush] = await Promise.all([
  startFakeApns(),
  startFakeFcm(),
  startFakeWebPush({ decrypt: "when-read" }),
]);
const caFile = join(work, "ca.pem");
writeFileSync(caFile, (await testCertificate()).cert);
const apnsKeyFile = join(work, "apns.p8");
writeFileSync(apnsKeyFile, apns.signingKey);
const vapid = webpush.generateVAPIDKeys();
const keyMaterial = generateKeyMaterial();
export const ring = new PushTokenKeyRing(
  parseKeyList(keyMaterial.keys),
  Buffer.from(keyMaterial.indexKey, "base64"),
);
export const password = "benchmark password";

// BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=…" profiles the server under load. The
// server runs with a serving process's heap and malloc arenas, as `npm start` gives them.
const serving = loadConfig(process.env);
const serverArgs = [
  ...servingHeapFlags(serving.processHeapMb),
  ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean),
];
/** A server process on the benchmark's database (a second one is a peer: same database). */
async function spawnServer(name: string) {
  const proc: ChildProcess = spawn(
    process.execPath,
    [...serverArgs, join(root, "scripts/bench/server.ts")],
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        HERALD_DATA_DIR: join(work, name),
        HERALD_LOG_LEVEL: process.env.BENCH_SERVER_LOG_LEVEL ?? "warn",
        MALLOC_ARENA_MAX: String(serving.mallocArenas),
        ...unlimited,
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
  const said = await new Promise<{ url: string; apiKey: string }>((resolveUrl, reject) => {
    let buf = "";
    proc.stdout?.on("data", (c: Buffer) => {
      // The server's own log lines (warnings and errors) are shown; the first JSON line is ours.
      if (buf.includes("\n")) process.stderr.write(c);
      buf += c.toString();
      const line = buf.split("\n").find((l) => l.startsWith("{"));
      if (line) resolveUrl(JSON.parse(line));
    });
    proc.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { proc, ...said };
}

const first = await spawnServer("data");
const child = first.proc;
/** The first server process's pid (for its CPU time). */
export const serverPid = child.pid as number;
export const { url, apiKey } = first;
/** The first server process: its address and pid (loop-stalls.ts reads both). */
export const benchServer = { url, pid: serverPid };
const peers: ChildProcess[] = [];

/** Another server process on the same database: its address. Stopped by `cleanup`. */
export async function startPeer(): Promise<string> {
  const peer = await spawnServer(`data-peer-${peers.length}`);
  peers.push(peer.proc);
  return peer.url;
}
/**
 * Stops the peers (scenario 3's second process): later scenarios measure one server process,
 * the default of `npm start` on two cores (HERALD_PROCESSES: the cores but one).
 */
export async function stopPeers(): Promise<void> {
  const stopping = peers.splice(0);
  const exited = stopping.map((p) => new Promise((r) => p.once("exit", r)));
  for (const p of stopping) p.kill("SIGTERM");
  await Promise.all(exited);
}
/** Every server process's pid: the first, then its peers. */
export const serverPids = (): number[] => [serverPid, ...peers.map((p) => p.pid as number)];
export const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
export const auth = { authorization: `Bearer ${apiKey}` };
setUp = true;

/** Takes it all down, once: a signal's handler and main.ts' `finally` may both ask. */
let cleaned: Promise<void> | undefined;
export function cleanup(): Promise<void> {
  cleaned ??= takeDown();
  return cleaned;
}

async function takeDown(): Promise<void> {
  for (const p of [...peers, ...running]) p.kill("SIGTERM");
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
  // Its own, and those of the servers a scenario started if it was stopped before they were.
  for (const d of [database, ...benchDatabases]) await dropBenchDatabase(serverUrl, d);
  await stopPg();
  rmSync(work, { recursive: true, force: true });
}

/**
 * Waits until the delivery worker has fanned out everything earlier scenarios published, so
 * that a latency scenario does not queue behind their backlog; says how long that took.
 */
export async function quiesce(): Promise<void> {
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

/** The PostgreSQL server the benchmark's databases are on. */
export const pgServerUrl = serverUrl;
