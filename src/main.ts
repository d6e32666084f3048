/**
 * `npm start`: a supervisor (primary.ts) that owns the database and forks HERALD_PROCESSES
 * serving processes (serve.ts), replacing any that dies. A forked process is told its database
 * by the supervisor.
 */
import cluster from "node:cluster";
import { enableCompileCache } from "node:module";
import { loadConfig } from "./config.ts";
import { complain } from "./observability/logger.ts";

// V8's compiled code kept on disk (the system's temporary directory) between starts: a
// replacement serving process loads its modules from it, several times faster under load.
enableCompileCache();

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  complain(`herald failed to start: ${(err as Error).message}\n`);
  process.exit(1);
}
// Each role loads only its own modules: the supervisor never loads the app.
if (cluster.isPrimary) {
  const { runPrimary } = await import("./primary.ts");
  // The serving processes run this very file (main.ts as TypeScript, main.js in the build).
  await runPrimary(config, import.meta.filename);
} else {
  const { serve } = await import("./serve.ts");
  serve(config);
}
