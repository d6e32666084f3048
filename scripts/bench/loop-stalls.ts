/**
 * Where a fixed-rate run's tail latency can go inside the server: the share of its publishes
 * the server itself took over 25 ms (`herald_publish_duration_seconds`, from the call's arrival
 * at the interceptors to its answer, the commit included), how many of the group commits'
 * statements PostgreSQL took over 25 ms (`herald_publish_commit_duration_seconds`: a slow tail
 * the commits share went to the database and its disk), how long its event loop was held
 * (prom-client's `nodejs_eventloop_lag_*`, a 10 ms timer's lateness, reset at each scrape) and
 * its garbage collection pauses by kind (`nodejs_gc_duration_seconds`), from its /metrics
 * before and after the run. A client's p99 over target while the server took few publishes
 * over 25 ms went to what is outside the calls: parsing and writing HTTP, the sockets, the
 * machine, the load generator (for a Node client in this process, its own line says how much).
 */
import { availableParallelism } from "node:os";
import { watchClient } from "./client-stalls.ts";
import { sampleOf } from "./context.ts";
import { machineMeter, runQueueClause, runQueueMeter } from "./cpu-time.ts";

/** prom-client's event loop monitor samples with a 10 ms timer: its lag includes those 10 ms. */
const resolution = 0.01;
const kinds = ["minor", "major", "incremental"] as const;

const scrape = async (url: string) => (await fetch(`${url}/metrics`)).text();

/** Publishes of `protocol` the server answered, and how many of them within 25 ms. */
function publishes(text: string, protocol: string) {
  const series = (le: string) =>
    sampleOf(text, `herald_publish_duration_seconds_bucket{le="${le}",protocol="${protocol}"}`);
  return { all: series("+Inf"), fast: series("0.025") };
}

/** The commit histogram's bounds from 25 ms up (s): how many statements took at most each. */
const commitBounds = ["0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf"];
const commits = (text: string) =>
  commitBounds.map((le) =>
    sampleOf(text, `herald_publish_commit_duration_seconds_bucket{le="${le}"}`),
  );

/** The group commits' statements (every protocol's) PostgreSQL took over 25 ms, and the longest. */
function slowCommits(before: number[], after: number[]): string {
  const upTo = after.map((n, i) => n - (before[i] ?? 0));
  const all = upTo.at(-1) ?? 0;
  const slow = all - (upTo[0] ?? 0);
  const i = upTo.indexOf(all);
  const longest =
    commitBounds[i] === "+Inf" ? "over 2.5 s" : `${commitBounds[i - 1]}-${commitBounds[i]} s`;
  return `PostgreSQL took ${slow} of the ${all} group commits over 25 ms${slow > 0 ? ` (the longest ${longest})` : ""}`;
}

function gc(text: string) {
  return kinds.map((kind) => ({
    kind,
    count: sampleOf(text, `nodejs_gc_duration_seconds_count{kind="${kind}"}`),
    sum: sampleOf(text, `nodejs_gc_duration_seconds_sum{kind="${kind}"}`),
  }));
}

/**
 * Starts watching the server at `url` (process `pid`) while it is sent publishes over `protocol`
 * (its metrics' label: rest, grpc, connect); the scrape resets the loop's histogram. With
 * `clientHere`, the client is a Node one in this benchmark's process, and its own stalls are
 * watched too (client-stalls.ts). The function it answers reads what happened since, as one
 * line; how long the server's event loop thread waited for a core (cpu-time.ts) says how much
 * of its held loop was the machine running something else, and the machine's busy cores
 * meanwhile whether that was its other work or cores it did not get (a virtual machine's host).
 */
export async function watchStalls(
  target: { url: string; pid: number },
  protocol: string,
  clientHere = false,
): Promise<() => Promise<string>> {
  const { url } = target;
  const waits = runQueueMeter(target.pid);
  const machine = machineMeter();
  const first = await scrape(url);
  const before = gc(first);
  const sent = publishes(first, protocol);
  const committed = commits(first);
  const client = clientHere ? watchClient() : undefined;
  return async () => {
    const inClient = client?.();
    const after = await scrape(url);
    const now = publishes(after, protocol);
    const all = now.all - sent.all;
    const slow = all - (now.fast - sent.fast);
    const server = `the server took ${((100 * slow) / Math.max(1, all)).toFixed(1)} % of ${all} publishes over 25 ms; ${slowCommits(committed, commits(after))}`;
    const lag = (series: string) =>
      Math.max(0, (sampleOf(after, `nodejs_eventloop_lag_${series}_seconds`) - resolution) * 1000);
    const pauses = gc(after)
      .map((g, i) => {
        const b = before[i] as (typeof before)[number];
        const n = g.count - b.count;
        return n > 0 ? `${n} ${g.kind} (${((g.sum - b.sum) * 1000).toFixed(0)} ms)` : "";
      })
      .filter(Boolean);
    const inServer = `${server}; its event loop held up to ${lag("max").toFixed(0)} ms (p99 ${lag("p99").toFixed(1)} ms)${runQueueClause(waits, all)}; GC ${pauses.join(", ") || "none"}; the machine ${machine.cores().toFixed(2)} of ${availableParallelism()} cores busy`;
    return inClient === undefined ? inServer : `${inServer}; ${inClient}`;
  };
}
