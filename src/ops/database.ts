/**
 * The database for an operator's command (`npm run reencrypt-tokens`, `owner:setup-link`): the
 * server's own, DATABASE_URL or the embedded one in the data directory, opened, used, closed.
 */
import type { Config } from "../config.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { type Orm, openDatabase } from "../db/orm.ts";

export async function withDatabase<T>(config: Config, use: (orm: Orm) => Promise<T>): Promise<T> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dir: config.dataDir });
  const orm = await openDatabase({
    url: config.databaseUrl ?? (embedded?.url as string),
    poolSize: 2,
  });
  try {
    return await use(orm);
  } finally {
    await orm.close();
    await embedded?.stop();
  }
}
