/** Scenario 1: publish over REST, at fixed rates (loadtest, an open loop) and at the maximum. */
import autocannon from "autocannon";
import { type LoadTestResult, loadTest } from "loadtest";
import { benchNotification, log, record, secs } from "../context.ts";
import { h2loadPacedRow } from "../h2load.ts";
import { auth, benchServer, url } from "../infrastructure.ts";
import { watchStalls } from "../loop-stalls.ts";
import { judgeP99 } from "../targets.ts";

/** The REST maximum, publishes per second. */
export async function restPublish(): Promise<number> {
  // --- 1. publish over REST ---------------------------------------------------------------
  log("1. publish over REST (autocannon)");
  const cannon = (opts: { connections: number; rate?: number; seconds: number }) =>
    autocannon({
      url: `${url}/v1/notify`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(benchNotification),
      connections: opts.connections,
      duration: opts.seconds,
      ...(opts.rate ? { overallRate: opts.rate } : {}),
    });
  await cannon({ connections: 10, seconds: secs(3) }); // warm-up
  // Fixed rates with loadtest: it sends at even intervals (an open loop). autocannon's rate
  // limit is not that: each connection sends its whole per-second quota back to back at the
  // top of every second, so "500/s" arrives as bursts of 500 at full speed, and it pads the
  // histogram with synthetic samples for each slow answer.
  for (const rate of [200, 500, 1000]) {
    const stalls = await watchStalls(benchServer, "rest", true);
    const r = await new Promise<LoadTestResult>((done, fail) =>
      loadTest(
        {
          url: `${url}/v1/notify`,
          method: "POST",
          headers: auth,
          contentType: "application/json",
          body: JSON.stringify(benchNotification),
          requestsPerSecond: rate,
          maxSeconds: secs(10),
          agentKeepAlive: true,
          quiet: true,
        },
        (err: Error | null, result: LoadTestResult) => (err ? fail(err) : done(result)),
      ),
    );
    const s = {
      perSecond: r.rps,
      p50: r.percentiles[50],
      p90: r.percentiles[90],
      p99: r.percentiles[99],
      errors: r.totalErrors,
    };
    const where = await stalls();
    record(
      `REST publish at ${rate}/s offered`,
      `${s.perSecond}/s, p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms, errors ${s.errors}; ${where}`,
      s,
    );
    if (rate === 500) {
      judgeP99("REST (loadtest)", s.p99, where);
      await h2loadPacedRow("REST", "rest");
    }
  }
  const max = await cannon({ connections: 50, seconds: secs(10) });
  const restMax = Math.round(max.requests.average);
  record(
    "REST publish, maximum (50 connections)",
    `${restMax}/s, p50 ${max.latency.p50} ms, p99 ${max.latency.p99} ms, errors ${max.non2xx + max.errors}`,
    { perSecond: restMax, p50: max.latency.p50, p99: max.latency.p99 },
  );
  return restMax;
}
