/**
 * `npm start`: the supervisor. It owns the database (it starts the embedded PostgreSQL, applies
 * migrations, bootstraps a first start, and makes the key files), then forks the serving
 * processes (supervisor/pool.ts), which share the port and each run a delivery worker over the
 * one queue. It serves no request itself.
 *
 * Stopping (supervisor/stopping.ts): SIGINT, SIGTERM, SIGHUP or SIGQUIT, to it alone or to its whole
 * process group, once or twice, with stdout a closed pipe or not, drains the serving
 * processes, then stops PostgreSQL last, then says so in one line.
 */
import type { Config } from "./config.ts";
import type { EmbeddedDatabase, EmbeddedEvent } from "./db/index.ts";
import { openDatabase, startEmbedded } from "./db/index.ts";
import { releaseStartupMemory } from "./observability/heap.ts";
import { createLogger } from "./observability/logger.ts";
import { bootstrapIfEmpty } from "./ops/bootstrap.ts";
import { firstRunMessage, ownerPasswordIgnored, platformStatus } from "./ops/first-run.ts";
import { settleMachineKeys } from "./ops/key-check.ts";
import { checkSettingFiles } from "./ops/setting-files.ts";
import { baseUrlOf } from "./ops/urls.ts";
import { packageVersion } from "./package-root.ts";
import { ProcessPool } from "./supervisor/pool.ts";
import { claimPort } from "./supervisor/port.ts";
import { Stopping } from "./supervisor/stopping.ts";

/** `mainFile`: the file the serving processes run (main.ts or the build's main.js). */
export async function runPrimary(config: Config, mainFile: string): Promise<void> {
  const log = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    role: "supervisor",
  });
  let embedded: Promise<EmbeddedDatabase | undefined> = Promise.resolve(undefined);
  let pool: ProcessPool | undefined;
  // A first start's key and setup link, once made: said when every process serves, or, if the
  // start fails or is stopped before that, as it stops (the next start is no first start, and
  // would not say them).
  let owed: ((stoppedEarly: boolean) => string) | undefined;
  const sayOwed = () => {
    if (owed) stopping.say(owed(true));
    owed = undefined;
  };
  const stopping = new Stopping({
    log,
    graceMs: config.shutdownGraceMs,
    workers: () => pool?.workers() ?? [],
    beforeDrain: () => {
      sayOwed();
      pool?.stopReplacing();
    },
    stopDatabase: async () => (await embedded.catch(() => undefined))?.stop(),
  });
  stopping.listen();

  try {
    checkSettingFiles(config);
    if (config.databaseUrl === undefined) embedded = startEmbedded(config, embeddedNews(log));
    const url = config.databaseUrl ?? ((await embedded) as EmbeddedDatabase).url;
    if (stopping.started) return;
    // Before the first start makes its key: a port in use fails with nothing made.
    const port = await claimPort(config.host, config.port);
    const ports = { port, ...(await otherPorts(config)) };
    const boot = await prepareDatabase(config, url);
    const base = baseUrlOf(config, port);
    if (boot) owed = (early) => firstRunMessage(boot, base, config, early);
    // Stopped while it made them (its beforeDrain came first): said here.
    if (stopping.started) return sayOwed();

    log.info(platformStatus(config));
    pool = new ProcessPool({
      ...servingProcesses(config, mainFile, url, ports, log),
      onGiveUp: (reason) => void stopping.stop(`herald failed to start: ${reason}`, 1),
      onAllServing: () => {
        log.info({ processes: config.processes, port, version: packageVersion }, "serving");
        stopping.say(owed?.(false) ?? readyMessage(config, base));
        owed = undefined;
      },
    });
    pool.start();
    releaseStartupMemory();
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    if (config.logLevel === "debug" && err instanceof Error) log.debug({ err }, "start failed");
    await stopping.stop(`herald failed to start: ${detail.split("\n")[0]}`, 1);
  }
}

/** The serving processes: how many, what they run, and what they are told. */
function servingProcesses(
  config: Config,
  mainFile: string,
  url: string,
  ports: { port: number } & Awaited<ReturnType<typeof otherPorts>>,
  log: ReturnType<typeof createLogger>,
) {
  return {
    exec: mainFile,
    size: config.processes,
    env: {
      DATABASE_URL: url,
      HERALD_BOOTSTRAP: "0",
      HERALD_LOG_FORMAT: config.logFormat,
      HERALD_PORT: String(ports.port),
      ...(ports.smtpPort !== undefined && { HERALD_SMTP_PORT: String(ports.smtpPort) }),
      ...(ports.metricsPort !== undefined && { HERALD_METRICS_PORT: String(ports.metricsPort) }),
      MALLOC_ARENA_MAX: String(config.mallocArenas),
    },
    log,
    heapMb: config.processHeapMb,
    watchdogMs: config.watchdogMs,
    startTimeoutMs: config.startTimeoutMs,
  };
}

/** Email in's and the metrics' ports, when set: claimed as the API's is, each by its setting. */
async function otherPorts(config: Config) {
  const { host, smtp, metricsPort } = config;
  return {
    smtpPort: smtp && (await claimPort(host, smtp.port, "HERALD_SMTP_PORT")),
    metricsPort:
      metricsPort === undefined
        ? undefined
        : await claimPort(host, metricsPort, "HERALD_METRICS_PORT"),
  };
}

/**
 * Migrates the database, bootstraps a first start, and holds this machine's keys to the
 * database's (the key files are generated here, once, before several processes would race to
 * make them; another machine's keys are refused).
 */
async function prepareDatabase(config: Config, url: string) {
  const orm = await openDatabase({ url, poolSize: 2 }).catch((err: unknown) => {
    throw config.databaseUrl === undefined ? err : unreachable(err, url);
  });
  try {
    const boot = config.bootstrap ? await bootstrapIfEmpty(orm, config.owner) : undefined;
    await settleMachineKeys(orm, config);
    return boot;
  } finally {
    await orm.close();
  }
}

/** Connection failures that say the server named by DATABASE_URL is not there. */
const notThere = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH"];

/** DATABASE_URL's server not reached, said with where it is (never the URL: its password). */
function unreachable(err: unknown, url: string): unknown {
  if (!notThere.includes((err as NodeJS.ErrnoException).code ?? "")) return err;
  const { hostname, port } = new URL(url);
  const where = `${decodeURIComponent(hostname) || "the local socket"}:${port || 5432}`;
  return new Error(
    `PostgreSQL at ${where} (DATABASE_URL) cannot be reached: ${(err as Error).message}`,
  );
}

/** The embedded PostgreSQL exited unasked, and is started again (db/embedded/running.ts). */
function embeddedNews(log: ReturnType<typeof createLogger>) {
  return (event: EmbeddedEvent, detail: string) => {
    if (event === "stopped") {
      log.error("the embedded PostgreSQL was shut down by another program; restart Herald");
    } else if (event === "exited") {
      log.error({ how: detail }, `the embedded PostgreSQL exited (${detail}); starting it again`);
    } else if (event === "back") log.info("the embedded PostgreSQL is running again");
    else if (event === "log-lost")
      log.warn(
        { reason: detail },
        `the embedded PostgreSQL's log cannot be written (${detail}); its lines are dropped until it can`,
      );
    else if (event === "log-back") log.info("the embedded PostgreSQL's log is written again");
    else if (event === "stop-forced")
      log.warn({ how: detail }, `the embedded PostgreSQL did not stop: ${detail}`);
    else
      log.warn(
        { reason: detail },
        `the embedded PostgreSQL did not start (${detail}); trying again`,
      );
  };
}

/** What a person reads once every serving process serves (after a start that is not the first). */
function readyMessage(config: Config, base: string): string {
  const processes = `${config.processes} serving ${config.processes === 1 ? "process" : "processes"}`;
  return (
    `${config.owner.password ? ownerPasswordIgnored(config.bootstrap) : ""}` +
    `Herald ${packageVersion} is running (${processes}): the console is at ${base}/ (Ctrl-C stops it)\n`
  );
}
