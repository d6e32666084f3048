/**
 * `npm run bench`: starts PostgreSQL (embedded, durable settings; or DATABASE_URL), fake APNs,
 * FCM and Web Push, and the server in its own process; measures publish throughput and latency
 * over REST, gRPC and Connect, end-to-end delivery to a stream device, fan-out to 1,000 devices,
 * provider throughput, and the machine's own limits; writes .bench/results.{md,json}.
 *
 *   npm run bench                 full run (a few minutes)
 *   npm run bench -- --smoke      seconds-long run that only checks the benchmark works (CI)
 *
 * One file per scenario under scenarios/; what they share is set up once by infrastructure.ts
 * (PostgreSQL, the fakes, the server) and context.ts (the command line and the report's rows).
 */
import { record, want } from "./context.ts";
import { cleanup, databaseUrl, db } from "./infrastructure.ts";
import { writeReport } from "./report.ts";
import { apnsThroughput } from "./scenarios/apns-throughput.ts";
import { cpuPerPublish } from "./scenarios/cpu.ts";
import { endToEnd } from "./scenarios/end-to-end.ts";
import { fanOut } from "./scenarios/fan-out.ts";
import { limits } from "./scenarios/limits.ts";
import { npmStart } from "./scenarios/npm-start.ts";
import { restPublish } from "./scenarios/rest.ts";
import { rpcPublish } from "./scenarios/rpc.ts";
import { measureYardstick } from "./yardstick.ts";

// Stopped from outside (Ctrl-C, a timeout): infrastructure.ts takes the servers and
// PostgreSQL down with it, from before PostgreSQL starts.

let restMax = Number.NaN;
try {
  // The yardstick first, on a quiet database: every Herald figure is a ratio to it.
  const measure = () => measureYardstick(db, databaseUrl);
  const yardstick = await measure();
  record(
    "Yardstick: PostgreSQL, transactions of two notification-shaped inserts, 32 clients (pgbench)",
    Number.isNaN(yardstick.perSecond)
      ? "missing: pgbench is not installed (Debian: postgresql-15)"
      : `${yardstick.perSecond}/s, latency ${yardstick.latencyMs} ms average`,
    yardstick,
  );
  if (want(1)) restMax = await restPublish();
  if (want(2)) await rpcPublish();
  if (want(3)) await endToEnd();
  if (want(4)) {
    await fanOut();
    await apnsThroughput();
  }
  if (want(5)) await limits(restMax, yardstick.perSecond);
  if (want(6)) await npmStart(yardstick.perSecond, async () => (await measure()).perSecond);
  if (want(7)) await cpuPerPublish(yardstick.perSecond);
  await writeReport();
} finally {
  await cleanup();
}
