/**
 * Where a fixed-rate run's tail latency can go inside the server: how long its event loop was
 * held (prom-client's `nodejs_eventloop_lag_*`, a 10 ms timer's lateness, reset at each scrape)
 * and its garbage collection pauses by kind (`nodejs_gc_duration_seconds`), from its /metrics
 * before and after the run. A p99 over target with a long loop stall or a long major GC says the
 * server held every request at once; without one, the time went elsewhere (PostgreSQL, the
 * machine, the load generator).
 */
import { sampleOf } from "./context.ts";

/** prom-client's event loop monitor samples with a 10 ms timer: its lag includes those 10 ms. */
const resolution = 0.01;
const kinds = ["minor", "major", "incremental"] as const;

const scrape = async (url: string) => (await fetch(`${url}/metrics`)).text();

function gc(text: string) {
  return kinds.map((kind) => ({
    kind,
    count: sampleOf(text, `nodejs_gc_duration_seconds_count{kind="${kind}"}`),
    sum: sampleOf(text, `nodejs_gc_duration_seconds_sum{kind="${kind}"}`),
  }));
}

/**
 * Starts watching the server at `url` (the scrape resets the loop's histogram); the function it
 * answers reads what happened since, as one line.
 */
export async function watchStalls(url: string): Promise<() => Promise<string>> {
  const before = gc(await scrape(url));
  return async () => {
    const after = await scrape(url);
    const lag = (series: string) =>
      Math.max(0, (sampleOf(after, `nodejs_eventloop_lag_${series}_seconds`) - resolution) * 1000);
    const pauses = gc(after)
      .map((g, i) => {
        const b = before[i] as (typeof before)[number];
        const n = g.count - b.count;
        return n > 0 ? `${n} ${g.kind} (${((g.sum - b.sum) * 1000).toFixed(0)} ms)` : "";
      })
      .filter(Boolean);
    return `the server's event loop held up to ${lag("max").toFixed(0)} ms (p99 ${lag("p99").toFixed(1)} ms); GC ${pauses.join(", ") || "none"}`;
  };
}
