/**
 * `npm start`: one serving process (serve.ts) when HERALD_PROCESSES is 1, otherwise a
 * supervising process (primary.ts) that owns the database and forks that many serving
 * processes sharing the port. A forked process is told its database by the supervisor.
 */
import cluster from "node:cluster";
import { loadConfig } from "./config.ts";

const config = loadConfig();
// Each role loads only its own modules: the supervisor never loads the app (its memory stays
// about a third of a serving process's).
if (cluster.isPrimary && config.processes > 1) {
  const { runPrimary } = await import("./primary.ts");
  runPrimary(config).catch((err: unknown) => {
    process.stderr.write(`herald failed to start: ${(err as Error).message.split("\n")[0]}\n`);
    process.exit(1);
  });
} else {
  const { serve } = await import("./serve.ts");
  serve(config, cluster.isWorker);
}
