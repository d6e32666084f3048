/**
 * One serving process, forked by the supervisor (primary.ts), which owns the database and says
 * what happened: open the database → build the app → listen. An ending signal (ending-signals.ts:
 * the supervisor's, or a terminal's Ctrl-C or Ctrl-\ to the whole group; once or several times)
 * stops accepting, drains in-flight calls and closes the database connections. A start that fails tells the
 * supervisor why before exiting, so that a reason that repeats stops the server with it.
 */
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import type { Config } from "./config.ts";
import { type Orm, openDatabase, servingStatementDeadlineMs } from "./db/index.ts";
import { createSenders } from "./delivery/senders/index.ts";
import { endingSignals } from "./ending-signals.ts";
import { releaseStartupMemory } from "./observability/heap.ts";
import { createLogger } from "./observability/logger.ts";
import { watchOpenFiles } from "./observability/open-files.ts";
import { loadPushTokenKeys } from "./ops/push-token-keys.ts";
import { heartbeatMs, type ServingMessage } from "./supervisor/pool.ts";
import { listenOptions } from "./supervisor/port.ts";

export function serve(config: Config): void {
  const log = createLogger({ level: config.logLevel, format: config.logFormat, role: "server" });
  let orm: Orm | undefined;
  let app: FastifyInstance | undefined;

  // Installed before anything starts, so that a signal during start-up still stops cleanly.
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      log.info({ signal }, "draining");
      try {
        await app?.close();
      } catch (err) {
        log.error({ err }, "closing the server failed");
      }
      await orm?.close().catch((err: unknown) => log.error({ err }, "closing the database failed"));
      process.exit(0);
    })();
  };
  for (const signal of endingSignals) process.on(signal, stop);
  // Every fire-and-forget promise has an owner that logs it; this is the last one.
  process.on("unhandledRejection", (err) => log.error({ err }, "unhandled rejection"));
  // The supervisor gone (SIGKILL, a crash) leaves no one to replace or stop this process.
  process.on("disconnect", () => stop("supervisor gone"));

  async function start() {
    const url = config.databaseUrl as string;
    orm = await openDatabase({
      url,
      poolSize: config.dbPoolSize,
      migrate: false,
      statementDeadlineMs: servingStatementDeadlineMs(config.idempotencyWaitMs),
    });
    const tokenKeys = loadPushTokenKeys(config);
    app = await buildApp({
      config,
      orm,
      tokenKeys: tokenKeys.ring,
      senders: await createSenders(config, log),
      loggerInstance: log,
    });
    log.debug({ source: tokenKeys.source, key_id: tokenKeys.ring.current.id }, "token key ring");
    if (stopping) return;
    // On the port the supervisor claimed for every process (never 0 here).
    await app.listen({ host: config.host, port: config.port, ...listenOptions });
    const serving: ServingMessage = { herald: "serving" };
    process.send?.(serving);
    // Signs of life for the supervisor's watchdog, from this event loop: a hung one sends none.
    if (config.watchdogMs > 0 && process.send) {
      const alive: ServingMessage = { herald: "alive" };
      setInterval(
        () => process.connected && process.send?.(alive),
        heartbeatMs(config.watchdogMs),
      ).unref();
    }
    releaseStartupMemory();
    watchOpenFiles(log);
  }

  start().catch((err: unknown) => {
    const reason = (err instanceof Error ? err.message : String(err)).split("\n")[0] as string;
    log.error({ err }, "start failed");
    const message: ServingMessage = { herald: "start-failed", reason };
    if (process.send) process.send(message, () => process.exit(1));
    else process.exit(1);
  });
}
