/**
 * The database for an operator's command (`npm run reencrypt-tokens`, `owner:reset-password`,
 * `backup`, `restore`): DATABASE_URL; or the embedded PostgreSQL of the data directory, the
 * running server's when one runs (used, never stopped), else one started for the command and
 * stopped after it, or when the command is interrupted (interrupt.ts).
 */
import type { Config } from "../config.ts";
import {
  attachEmbeddedPostgres,
  type EmbeddedDatabase,
  type Orm,
  openDatabase,
  startEmbeddedPostgres,
} from "../db/index.ts";
import { onInterrupt } from "./interrupt.ts";

/** The database's URL for the command, and how to let go of it afterwards. */
export async function commandDatabase(
  config: Config,
): Promise<EmbeddedDatabase | { url: string; stop(): Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };
  const running = await attachEmbeddedPostgres(config.dataDir);
  if (running) return running;
  // Interrupted while it starts, it is stopped once up: a fast shutdown, waited for.
  const starting = startEmbeddedPostgres({ dir: config.dataDir });
  const forget = onInterrupt(async () => (await starting).stop());
  const own = await starting.catch((err: unknown) => {
    forget();
    throw err;
  });
  return {
    ...own,
    stop: async () => {
      forget();
      await own.stop();
    },
  };
}

export async function withDatabase<T>(config: Config, use: (orm: Orm) => Promise<T>): Promise<T> {
  const db = await commandDatabase(config);
  try {
    const orm = await openDatabase({ url: db.url, poolSize: 2 });
    try {
      return await use(orm);
    } finally {
      await orm.close();
    }
  } finally {
    await db.stop();
  }
}
