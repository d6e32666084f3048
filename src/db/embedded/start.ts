/** Starting the embedded PostgreSQL that `npm start` runs when no DATABASE_URL is given. */
import { join } from "node:path";
import type { Config } from "../../config.ts";
import { makeDataDir } from "../../data-dir.ts";
import { appendingLog } from "./log-file.ts";
import { type EmbeddedDatabase, type EmbeddedOptions, startEmbeddedPostgres } from "./server.ts";

/**
 * The embedded PostgreSQL in the data directory, its log beside it; `say` hears when it exited
 * unasked and was started again, and when its log could not be written (log-file.ts).
 */
export async function startEmbedded(
  config: Config,
  say?: EmbeddedOptions["say"],
): Promise<EmbeddedDatabase> {
  makeDataDir(config.dataDir);
  const log = appendingLog(join(config.dataDir, "postgres.log"), (reason) =>
    reason === undefined ? say?.("log-back", "") : say?.("log-lost", reason),
  );
  const embedded = await startEmbeddedPostgres({
    dir: config.dataDir,
    log,
    ...(say ? { say } : {}),
  });
  if (!embedded.clusterDir.startsWith(config.dataDir)) {
    process.stdout.write(
      `The embedded PostgreSQL keeps its data in ${embedded.clusterDir}: its user cannot reach ${config.dataDir}.\n`,
    );
  }
  return embedded;
}
