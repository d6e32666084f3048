/** Starting the embedded PostgreSQL that `npm start` runs when no DATABASE_URL is given. */
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../config.ts";
import { type EmbeddedDatabase, type EmbeddedOptions, startEmbeddedPostgres } from "./server.ts";

/**
 * The embedded PostgreSQL in the data directory, its log beside it; `say` hears when it exited
 * unasked and was started again.
 */
export async function startEmbedded(
  config: Config,
  say?: EmbeddedOptions["say"],
): Promise<EmbeddedDatabase> {
  mkdirSync(config.dataDir, { recursive: true });
  const pgLog = createWriteStream(join(config.dataDir, "postgres.log"), { flags: "a" });
  const embedded = await startEmbeddedPostgres({
    dir: config.dataDir,
    log: (l) => pgLog.write(l),
    ...(say ? { say } : {}),
  });
  if (!embedded.clusterDir.startsWith(config.dataDir)) {
    process.stdout.write(
      `The embedded PostgreSQL keeps its data in ${embedded.clusterDir}: its user cannot reach ${config.dataDir}.\n`,
    );
  }
  return embedded;
}
