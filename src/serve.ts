/**
 * One serving process: database (the embedded one, unless DATABASE_URL or a supervising process
 * gave one) → migrations → first-start bootstrap → listen. SIGTERM/SIGINT stop accepting, drain
 * in-flight calls, close the database and stop the embedded PostgreSQL if this process started
 * it. Under a supervisor (primary.ts) the supervisor owns the database and says what happened.
 */
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import type { Config } from "./config.ts";
import type { EmbeddedDatabase } from "./db/embedded.ts";
import { type Orm, openDatabase } from "./db/orm.ts";
import { createSenders } from "./delivery/senders/index.ts";
import { bootstrapIfEmpty } from "./ops/bootstrap.ts";
import { startEmbedded } from "./ops/embedded.ts";
import { firstRunMessage, ownerPasswordIgnored } from "./ops/first-run.ts";
import { loadPushTokenKeys } from "./ops/push-token-keys.ts";
import { baseUrlOf } from "./ops/urls.ts";

/** Serves until a signal; `supervised` when a primary process runs this one. */
export function serve(config: Config, supervised: boolean): void {
  let embedded: EmbeddedDatabase | undefined;
  let orm: Orm | undefined;
  let app: FastifyInstance | undefined;

  // Installed before anything starts, so that a signal during start-up still stops cleanly.
  let stopping = false;
  async function stop(signal: string) {
    if (stopping) return;
    stopping = true;
    app?.log.info({ signal }, "shutting down");
    try {
      await app?.close();
      await orm?.close();
    } finally {
      await embedded?.stop();
    }
    process.exit(0);
  }
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));

  async function start() {
    if (config.databaseUrl === undefined) embedded = await startEmbedded(config);
    const url = config.databaseUrl ?? (embedded as EmbeddedDatabase).url;
    orm = await openDatabase({ url, poolSize: config.dbPoolSize });
    const boot = config.bootstrap ? await bootstrapIfEmpty(orm, config.owner) : undefined;
    const tokenKeys = loadPushTokenKeys(config);
    app = await buildApp({
      config,
      orm,
      tokenKeys: tokenKeys.ring,
      senders: createSenders(config),
    });
    app.log.info({ source: tokenKeys.source, key_id: tokenKeys.ring.current.id }, "token key ring");
    if (stopping) return;
    await app.listen({ host: config.host, port: config.port });
    if (supervised) return;
    const base = baseUrlOf(config, (app.server.address() as { port: number }).port);
    if (boot) process.stdout.write(firstRunMessage(boot, base, config));
    else if (config.owner.password) process.stdout.write(ownerPasswordIgnored(config.bootstrap));
    if (!boot) process.stdout.write(`Herald is running: the console is at ${base}/\n`);
  }

  start().catch(async (err: unknown) => {
    // One line a person can act on; the stack helps nobody here (HERALD_LOG_LEVEL=debug shows it).
    const detail = err instanceof Error ? err.message : String(err);
    process.stderr.write(`herald failed to start: ${detail.split("\n")[0]}\n`);
    if (config.logLevel === "debug" && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    await embedded?.stop();
    process.exit(1);
  });
}
