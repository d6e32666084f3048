/**
 * `npm start` with HERALD_PROCESSES > 1 (the default on a machine with several cores): this
 * process owns the database (it starts the embedded PostgreSQL, applies migrations, bootstraps
 * a first start, and makes the key files), then forks the serving processes, which share the
 * port (node:cluster hands them connections in turn) and each run a delivery worker over the one
 * queue. A serving process that dies is replaced; SIGTERM or SIGINT drains them all, then stops
 * PostgreSQL. It serves no request itself.
 */
import cluster, { type Worker } from "node:cluster";
import type { Config } from "./config.ts";
import type { EmbeddedDatabase } from "./db/embedded.ts";
import { openDatabase } from "./db/orm.ts";
import { bootstrapIfEmpty } from "./ops/bootstrap.ts";
import { startEmbedded } from "./ops/embedded.ts";
import { firstRunMessage, ownerPasswordIgnored } from "./ops/first-run.ts";
import { loadPushTokenKeys } from "./ops/push-token-keys.ts";
import { baseUrlOf } from "./ops/urls.ts";
import { loadVapidKeys } from "./ops/vapid-keys.ts";

/** One JSON log line, in the shape the serving processes' logger writes. */
function log(level: "info" | "warn" | "error", msg: string, fields: object = {}) {
  const n = { info: 30, warn: 40, error: 50 }[level];
  process.stdout.write(
    `${JSON.stringify({ level: n, time: Date.now(), pid: process.pid, role: "primary", ...fields, msg })}\n`,
  );
}

export async function runPrimary(config: Config): Promise<void> {
  let embedded: EmbeddedDatabase | undefined;
  let stopping = false;
  const listening = new Set<number>();

  const stop = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log("info", "shutting down", { signal });
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            // Past the grace period and then some, a process that still runs is ended.
            const kill = setTimeout(() => w.process.kill("SIGKILL"), config.shutdownGraceMs + 5000);
            w.once("exit", () => {
              clearTimeout(kill);
              resolve();
            });
            w.process.kill("SIGTERM");
          }),
      ),
    );
    await embedded?.stop();
    process.exit(code);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));

  if (config.databaseUrl === undefined) embedded = await startEmbedded(config);
  const url = config.databaseUrl ?? (embedded as EmbeddedDatabase).url;
  const orm = await openDatabase({ url, poolSize: 2 });
  const boot = config.bootstrap ? await bootstrapIfEmpty(orm, config.owner) : undefined;
  await orm.close();
  // Generated keys are written once, here, before several processes would race to make them.
  loadPushTokenKeys(config);
  loadVapidKeys(config);

  const env = { DATABASE_URL: url, HERALD_BOOTSTRAP: "0" };
  setHeap(config.processHeapMb);
  const fork = () => cluster.fork(env);
  let port = config.port;
  await new Promise<void>((resolve, reject) => {
    cluster.on("listening", (w, address) => {
      listening.add(w.id);
      port = address.port;
      if (listening.size === config.processes) resolve();
    });
    cluster.on("exit", (w, code, signal) => {
      const served = listening.delete(w.id);
      if (stopping) return;
      if (!served) {
        // It died starting: another would too (a port in use, a bad setting). Stop everything.
        reject(new Error(`a serving process failed to start (exit ${code ?? signal})`));
        return;
      }
      log("warn", "a serving process died; starting another", {
        worker_pid: w.process.pid,
        code,
        signal,
      });
      setTimeout(() => !stopping && fork(), 500);
    });
    for (let i = 0; i < config.processes; i++) fork();
  }).catch(async (err: unknown) => {
    process.stderr.write(`herald failed to start: ${(err as Error).message}\n`);
    await stop("start failed", 1);
  });
  if (stopping) return;
  const base = baseUrlOf(config, port);
  log("info", "serving", { processes: config.processes, port });
  if (boot) process.stdout.write(firstRunMessage(boot, base, config));
  else if (config.owner.password) process.stdout.write(ownerPasswordIgnored(config.bootstrap));
  if (!boot) {
    process.stdout.write(
      `Herald is running (${config.processes} processes): the console is at ${base}/\n`,
    );
  }
}

/**
 * Smaller young and old generations for the serving processes: measured at the REST maximum with
 * two processes, 310 MB each with V8's defaults, 180-200 MB with these, at the same throughput
 * (docs/operations.md). 0 leaves V8's defaults.
 */
function setHeap(oldSpaceMb: number): void {
  if (oldSpaceMb === 0) return;
  cluster.setupPrimary({
    execArgv: [
      ...process.execArgv,
      "--max-semi-space-size=8",
      `--max-old-space-size=${oldSpaceMb}`,
    ],
  });
}
