import { resolve } from "node:path";
import {
  type Env,
  flag,
  groupCommitSlots,
  int,
  limits,
  listeningPorts,
  logSettings,
  ownerEmail,
  databaseUrl as parseDatabaseUrl,
  processCount,
  processHeapMb,
  publicAddress,
  smtp,
  trustProxy,
} from "./config-parse.ts";
import { apns, pushTokenKeys, vapidKeys, webPushHosts } from "./config-push.ts";
import type { Limits } from "./domain/limits.ts";
import { maxKeepaliveMs } from "./domain/stream-silence.ts";

/** Everything Herald reads from the environment, read once at start and passed down. */
export interface Config {
  /** Address to listen on. Loopback by default: exposing the server is a deliberate act. */
  host: string;
  /** One port serves HTTP/1.1 (REST, Connect, gRPC-Web) and cleartext HTTP/2 (gRPC). */
  port: number;
  /** Where the embedded PostgreSQL keeps its data (and, later, generated keys). */
  dataDir: string;
  /** An external PostgreSQL; when unset, an embedded one runs under `dataDir`. */
  databaseUrl: string | undefined;
  /**
   * Create an account, a project and an API key on an empty database. Always on for the embedded
   * database; for `DATABASE_URL` only with `HERALD_BOOTSTRAP=1`, so that a shared database never
   * gets a surprise admin key.
   */
  bootstrap: boolean;
  /** Connections per process. Publishing holds one for a single short transaction. */
  dbPoolSize: number;
  /** Pino log level. */
  logLevel: string;
  /**
   * One readable line per event (`pretty`, the default on a terminal) or one JSON object per
   * line (`json`, the default otherwise: a log collector reads it): HERALD_LOG_FORMAT.
   */
  logFormat: "json" | "pretty";
  /** Largest accepted request body (16 KiB): the JSON of a maximal notification is far below it. */
  bodyLimitBytes: number;
  /** Largest body an inbound hook takes (1 MiB): senders' events are far bigger than ours. */
  hookBodyLimitBytes: number;
  /**
   * Email in (docs/integrations.md, "Email"): the SMTP port (HERALD_SMTP_PORT; off when unset),
   * STARTTLS's key and certificate files (HERALD_SMTP_TLS_KEY, HERALD_SMTP_TLS_CERT), and the
   * domain of the hooks' addresses (HERALD_SMTP_DOMAIN; default: the public URL's host).
   */
  smtp:
    | {
        port: number;
        tls: { keyFile: string; certFile: string } | undefined;
        domain: string | undefined;
      }
    | undefined;
  /** How long an idempotency key is remembered (docs/api.md: 24 hours). */
  idempotencyTtlSeconds: number;
  /**
   * How long a concurrent duplicate waits for the first request with its idempotency key to
   * commit before it gets 409 `idempotency_key_in_use`.
   */
  idempotencyWaitMs: number;
  /** Token bucket per credential: burst size. */
  rateLimitBurst: number;
  /** Token bucket per credential: tokens added per second. */
  rateLimitPerSecond: number;
  /**
   * Whether the rate limit is one bucket per credential shared through PostgreSQL by every
   * process (the default), or each process's own (HERALD_RATE_LIMIT_SHARED=0).
   */
  rateLimitShared: boolean;
  /** How long a verified credential is trusted without asking the database again. Revocation
   * reaches every process within this time, so it must stay at or below 1 second. */
  credentialCacheMs: number;
  /**
   * Whether SignUp is open (HERALD_SIGNUP=1). Closed by default: a private service run by one
   * owner should not let whoever reaches its port create an account.
   */
  signupEnabled: boolean;
  /** Notifications an account on the free plan may publish per calendar month (UTC). */
  monthlyQuota: number;
  /** The URL people use to reach this server; shown in device-login instructions. */
  publicUrl: string | undefined;
  /** Failed password logins: per account, a bucket of this many, refilled one per minute. */
  loginFailuresPerAccount: number;
  /** Longest silence on a live stream before a keepalive (≤ 30 s, PRODUCT promise). */
  streamKeepaliveMs: number;
  /** Most notification ids a live stream holds for a client that does not read (inbox.ts). */
  streamHeldIds: number;
  /** How long a worker's claim on a delivery lasts; a dead worker's work is retried after it. */
  deliveryLeaseSeconds: number;
  /** Push sends a worker keeps outstanding at once (a slow provider never blocks the others). */
  deliveryConcurrency: number;
  /** Notifications older than this many days are deleted (with their deliveries). */
  retentionDays: number;
  /**
   * Which proxies' `X-Forwarded-For` to believe for the client address (login limits, logs):
   * false (none: the peer address counts), a number of hops, or a comma list of addresses and
   * CIDR ranges (HERALD_TRUST_PROXY).
   */
  trustProxy: false | number | string;
  /**
   * Processes serving the port (HERALD_PROCESSES, default the cores but one), under a
   * supervising process that owns the embedded PostgreSQL and replaces a process that dies.
   */
  processes: number;
  /**
   * V8 heap settings of the serving processes a supervisor forks (HERALD_PROCESS_HEAP_MB: the
   * old generation's limit, default 2048, with 16 MB semi-spaces; 0 leaves V8's defaults). V8
   * lets the old generation grow between full collections by at most a factor set by this limit
   * (`--trace-gc-verbose` on a 24 GB machine: 1.3 at 256 MB, 1.4 at 512, 1.6 at 1024, 4 from
   * 2048): at 256 MB, the default until the twenty-seventh session, gRPC's maximum was 15 %
   * lower and REST's 4 %, for 65 MB less at that load (BENCHMARKS.md).
   */
  processHeapMb: number;
  /**
   * glibc's malloc arenas in each serving process (MALLOC_ARENA_MAX, default 1): otherwise each
   * thread that allocates (V8's compiler and GC threads, libuv's pool) keeps an arena of its
   * own, 1-2 MB each when idle. One arena cost no measurable CPU (BENCHMARKS.md, issue 20).
   */
  mallocArenas: number;
  /** Whether this process runs a delivery worker (HERALD_WORKER=0 for API-only processes). */
  workerEnabled: boolean;
  /** Grace period for in-flight requests on SIGTERM/SIGINT before they are cut. */
  shutdownGraceMs: number;
  /**
   * How long a serving process may go without a sign of life (a heartbeat its event loop sends
   * the supervisor every second) before the supervisor kills and replaces it: a process hung
   * (a loop that never yields, stopped by SIGSTOP) takes its share of new connections and answers
   * none (HERALD_WATCHDOG_SECONDS, default 20; 0 turns it off).
   */
  watchdogMs: number;
  /**
   * How long a serving process may take from its fork to serving before the supervisor kills
   * and replaces it: its start waits on nothing unbounded by design, so one that takes longer is
   * stuck (stopped, or waiting on a connection a network dropped without a word) and holds its
   * slot for good (HERALD_START_TIMEOUT_SECONDS, default 60; 0 turns it off).
   */
  startTimeoutMs: number;
  /** Idle connections kept open: above common balancers' 60 s (AWS ALB), which close first. */
  keepAliveMs: number;
  /** The bootstrap account of a first start (HERALD_OWNER_EMAIL, HERALD_OWNER_PASSWORD). */
  owner: { email: string; password: string | undefined };
  /**
   * The push-token key ring from the environment (HERALD_TOKEN_KEYS, HERALD_TOKEN_INDEX_KEY),
   * or undefined to use (and on first use generate) `<dataDir>/token-keys.json`.
   */
  pushTokenKeys: { keys: string; indexKey: string } | undefined;
  /** Web Push's VAPID keys (undefined: `<dataDir>/vapid.json`) and contact subject. */
  vapid: { publicKey: string; privateKey: string } | undefined;
  vapidSubject: string;
  /** APNs token authentication, or undefined when iOS pushes are not configured. */
  apns:
    | { keyFile: string; keyId: string; teamId: string; bundleId: string; sandbox: boolean }
    | undefined;
  /** FCM service account file, or undefined when Android pushes are not configured. */
  fcmServiceAccountFile: string | undefined;
  /** Web Push endpoints' allowed hosts: the public services + HERALD_WEB_PUSH_HOSTS (`*.x.com`). */
  webPushHosts: string[];
  /** Push endpoints may resolve to private addresses (HERALD_WEB_PUSH_ALLOW_PRIVATE=1: tests). */
  webPushAllowPrivate: boolean;
  /**
   * Webhooks: endpoints may be private, loopback or link-local (HERALD_WEBHOOK_ALLOW_PRIVATE=1,
   * tests and in-house receivers only); an endpoint is disabled after this many failed attempts
   * in a row (HERALD_WEBHOOK_DISABLE_AFTER); the retry backoff is multiplied by
   * `webhookBackoffScale` (1; tests shrink it).
   */
  webhookAllowPrivate: boolean;
  webhookDisableAfter: number;
  webhookBackoffScale: number;
  /** Multiplies acknowledgement repeat and escalation intervals (1; tests shrink it). */
  ackIntervalScale: number;
  /**
   * Group commit of publishes (HERALD_GROUP_COMMIT=0 turns it off: one commit per publish), with
   * this many batches committing at once (HERALD_GROUP_COMMIT_SLOTS).
   */
  groupCommit: boolean;
  groupCommitSlots: number;
  /**
   * Most devices a group-committed publish may reach to be fanned out in its own commit
   * (HERALD_FAN_OUT_AT_COMMIT, 100; 0: every publish waits for the workers' fan-out).
   */
  fanOutAtCommit: number;
  /** Most deliveries one statement of the workers' fan-out writes (HERALD_FAN_OUT_CHUNK, 1000; 100 at least). */
  fanOutChunk: number;
  /** gRPC server reflection (v1 and v1alpha) for grpcurl and `buf curl` (HERALD_REFLECTION=0 turns it off). */
  reflection: boolean;
  /** How often a gRPC health Watch re-checks readiness between changes it is told of. */
  healthWatchIntervalMs: number;
  /** Serve GET /metrics on this port instead of the API's (HERALD_METRICS_PORT). */
  metricsPort: number | undefined;
  /** The limits per account and per project (domain/limits.ts), each from its variable. */
  limits: Limits;
  /** How often the delivery worker runs each of its periodic jobs (delivery/jobs/). */
  workerClock: WorkerClock;
}

/** Milliseconds between runs of each periodic job of the worker (`claimRetries`: its look for
 * pushes come due by retry when nothing was just fanned out; `idlePoll`: its sleep when it found
 * nothing to do, cut short by a publish here or by room for more sends). */
export const workerClock = {
  idlePoll: 250,
  releaseScheduled: 200,
  repeatUnacknowledged: 200,
  escalate: 200,
  sendClears: 200,
  expireStreams: 5_000,
  claimRetries: 100,
};
export type WorkerClock = Record<keyof typeof workerClock, number>;

/** Time as it runs in production; tests shrink these to see hours of backoff in seconds. */
const timeScales = { webhookBackoffScale: 1, ackIntervalScale: 1 };

/** The VAPID keys given in the environment, both or none (otherwise .herald/vapid.json's). */
/** How the supervisor runs, stops and watches its serving processes. */
const supervision = (env: Env, processes: number) => ({
  shutdownGraceMs: int(env, "HERALD_SHUTDOWN_GRACE_MS", 10000, 0, 600000),
  watchdogMs: int(env, "HERALD_WATCHDOG_SECONDS", 20, 0, 3600) * 1000,
  startTimeoutMs: int(env, "HERALD_START_TIMEOUT_SECONDS", 60, 0, 3600) * 1000,
  processHeapMb: processHeapMb(env, processes),
  mallocArenas: int(env, "MALLOC_ARENA_MAX", 1, 1, 1024),
});

/** Reads the configuration; throws with the variable's name when a value is unusable. */
export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = parseDatabaseUrl(env);
  const processes = processCount(env);
  const { port, smtpPort, metricsPort } = listeningPorts(env);
  return {
    host: env.HERALD_HOST || "127.0.0.1",
    port,
    dataDir: resolve(env.HERALD_DATA_DIR || ".herald"),
    databaseUrl,
    bootstrap: databaseUrl === undefined || flag(env, "HERALD_BOOTSTRAP", false),
    dbPoolSize: int(env, "HERALD_DB_POOL_SIZE", 10, 1, 200),
    ...logSettings(env),
    bodyLimitBytes: 16 * 1024,
    hookBodyLimitBytes: 1024 * 1024,
    smtp: smtp(env, smtpPort),
    idempotencyTtlSeconds: int(env, "HERALD_IDEMPOTENCY_TTL_SECONDS", 86400, 60, 7 * 86400),
    idempotencyWaitMs: int(env, "HERALD_IDEMPOTENCY_WAIT_MS", 5000, 0, 60000),
    rateLimitBurst: int(env, "HERALD_RATE_LIMIT_BURST", 60, 1, 1_000_000),
    rateLimitPerSecond: int(env, "HERALD_RATE_LIMIT_PER_SECOND", 10, 1, 1_000_000),
    rateLimitShared: flag(env, "HERALD_RATE_LIMIT_SHARED", true),
    credentialCacheMs: int(env, "HERALD_CREDENTIAL_CACHE_MS", 500, 0, 1000),
    signupEnabled: flag(env, "HERALD_SIGNUP", false),
    streamKeepaliveMs: int(env, "HERALD_STREAM_KEEPALIVE_MS", 25_000, 100, maxKeepaliveMs),
    streamHeldIds: 10_000,
    workerEnabled: flag(env, "HERALD_WORKER", true),
    processes,
    ...supervision(env, processes),
    retentionDays: int(env, "HERALD_RETENTION_DAYS", 30, 1, 3650),
    trustProxy: trustProxy(env.HERALD_TRUST_PROXY),
    deliveryLeaseSeconds: int(env, "HERALD_DELIVERY_LEASE_SECONDS", 30, 1, 60),
    deliveryConcurrency: int(env, "HERALD_DELIVERY_CONCURRENCY", 2000, 1, 100_000),
    monthlyQuota: int(env, "HERALD_MONTHLY_QUOTA", 10_000, 0, 2_000_000_000),
    ...publicAddress(env),
    loginFailuresPerAccount: int(env, "HERALD_LOGIN_FAILURES_PER_ACCOUNT", 10, 1, 1000),
    keepAliveMs: 72_000,
    owner: {
      email: ownerEmail(env),
      password: env.HERALD_OWNER_PASSWORD || undefined,
    },
    pushTokenKeys: pushTokenKeys(env),
    vapid: vapidKeys(env),
    apns: apns(env),
    fcmServiceAccountFile: env.HERALD_FCM_SERVICE_ACCOUNT_FILE || undefined,
    webPushHosts: webPushHosts(env),
    webPushAllowPrivate: flag(env, "HERALD_WEB_PUSH_ALLOW_PRIVATE", false),
    webhookAllowPrivate: flag(env, "HERALD_WEBHOOK_ALLOW_PRIVATE", false),
    webhookDisableAfter: int(env, "HERALD_WEBHOOK_DISABLE_AFTER", 50, 1, 100_000),
    ...timeScales,
    reflection: flag(env, "HERALD_REFLECTION", true),
    groupCommit: flag(env, "HERALD_GROUP_COMMIT", true),
    groupCommitSlots: groupCommitSlots(env, processes),
    fanOutAtCommit: int(env, "HERALD_FAN_OUT_AT_COMMIT", 100, 0, 10_000),
    fanOutChunk: int(env, "HERALD_FAN_OUT_CHUNK", 1000, 100, 100_000),
    healthWatchIntervalMs: 5000,
    metricsPort,
    limits: limits(env),
    workerClock,
  };
}
