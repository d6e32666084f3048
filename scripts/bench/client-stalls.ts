/**
 * Where a fixed-rate run's tail can go outside the server, when the client is a Node one running
 * in this benchmark's own process (loadtest, the generated client, the bare HTTP/2 client): how
 * long this process's event loop was held (a 1 ms timer's lateness, `monitorEventLoopDelay`) and
 * its own garbage collection pauses. An answer that arrives while the client's loop is held is
 * timed late by as much, so a client's p99 over target with a server that took few publishes
 * over 25 ms, and a client loop held about that long, went to the client and the shared cores.
 * h2load, a separate C process, has none of these.
 */
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { fullCollection } from "../../src/observability/heap.ts";
import { runQueueClause, runQueueMeter } from "./cpu-time.ts";

const collect = fullCollection();

/**
 * Starts watching this process; the function it answers stops and reads it, as one clause.
 * This process first collects what earlier rows left: a client at its maximum (Connect-node's
 * gRPC transport promotes about 13 KB a call) fills the old generation, and the full
 * collection of it then paused whichever row ran next. A real client's process would not
 * carry another client's garbage.
 */
export function watchClient(): () => string {
  collect({ type: "major", execution: "sync" });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const waits = runQueueMeter(process.pid);
  let pauses = 0;
  let pausedMs = 0;
  let longestMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      pauses++;
      pausedMs += e.duration;
      longestMs = Math.max(longestMs, e.duration);
    }
  });
  gc.observe({ entryTypes: ["gc"] });
  delay.enable();
  return () => {
    delay.disable();
    gc.disconnect();
    // The histogram's values are the timer's lateness past its 1 ms resolution, in ns.
    const ms = (ns: number) => Math.max(0, ns / 1e6 - 1).toFixed(1);
    return `the client (this benchmark's process) held its event loop up to ${ms(delay.max)} ms (p99 ${ms(delay.percentile(99))} ms)${runQueueClause(waits)}, GC ${pauses} pause${pauses === 1 ? "" : "s"} (${pausedMs.toFixed(0)} ms, the longest ${longestMs.toFixed(1)} ms)`;
  };
}
