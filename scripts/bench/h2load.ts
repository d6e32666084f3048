/**
 * gRPC (h2c) and REST (HTTP/1.1) at full speed, both driven by h2load (nghttp2), a C load
 * generator, so that neither protocol's number carries a Node client's cost; and Connect's
 * binary unary calls over HTTP/1.1 (the SDK's default) the same way, for scenario 7.
 */
import { execFile, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Body, writeBodies } from "./bodies.ts";
import { record, secs, work } from "./context.ts";
import { auth, benchServer, url } from "./infrastructure.ts";
import { watchStalls } from "./loop-stalls.ts";
import { type Summary, summarize } from "./stats.ts";
import { judgeP99 } from "./targets.ts";

export const h2loadInstalled = () => spawnSync("h2load", ["--version"]).status === 0;
/** A row's result where h2load is missing. */
export const h2loadMissing = "skipped: h2load is not installed (apt-get install nghttp2-client)";

export interface Target {
  url: string;
  authorization: string;
}

export interface H2loadResult {
  perSecond: number;
  /** Requests answered with a 2xx. */
  answered: number;
  errors: number;
  meanLatency: string | undefined;
}

/** The protocols h2load publishes over. */
export type Protocol = "grpc" | "rest" | "connect";

/** Each publish's request bodies, written once into the benchmark's directory. */
const written = new Map<Body, Record<Protocol, string>>();
const bodies = (body: Body) => {
  let paths = written.get(body);
  if (paths === undefined) {
    paths = writeBodies(work, body);
    written.set(body, paths);
  }
  return paths;
};

/** Connections per protocol: gRPC 10 (× 10 streams each), REST and Connect over HTTP/1.1 50. */
const connections = { grpc: 10, rest: 50, connect: 50 } as const;
const streams = { grpc: 10, rest: 1, connect: 1 } as const;

/** Each protocol's path, headers and h2load flags. */
const wire = {
  grpc: {
    path: "/herald.v1.NotifyService/Notify",
    headers: ["content-type: application/grpc", "te: trailers"],
    flags: [],
  },
  rest: { path: "/v1/notify", headers: ["content-type: application/json"], flags: ["--h1"] },
  connect: {
    path: "/herald.v1.NotifyService/Notify",
    headers: ["content-type: application/proto"],
    flags: ["--h1"],
  },
} as const;

/** h2load's arguments for publishing `body` over `protocol`, less how long or how many. */
function publishArgs(target: Target, protocol: Protocol, body: Body = "bench"): string[] {
  const w = wire[protocol];
  return [
    ...[`authorization: ${target.authorization}`, ...w.headers].flatMap((h) => ["-H", h]),
    ...w.flags,
    ...["-c", String(connections[protocol]), "-m", String(streams[protocol])],
    ...["-d", bodies(body)[protocol], target.url + w.path],
  ];
}

/**
 * Publishes `body` (bodies.ts) at full speed for `seconds`: gRPC with 10 connections × 10
 * streams, REST over HTTP/1.1 with 50 connections. Asynchronous, so that the benchmark can
 * sample meanwhile.
 */
export async function h2load(
  target: Target,
  protocol: Protocol,
  seconds: number,
  body: Body = "bench",
): Promise<H2loadResult> {
  const { stdout: out } = await promisify(execFile)(
    "h2load",
    ["-D", String(seconds), ...publishArgs(target, protocol, body)],
    { encoding: "utf8" },
  );
  const rate = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1]);
  const codes = /status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const failed = /(\d+) failed, (\d+) errored/.exec(out);
  const errors = [codes?.[1], codes?.[2], codes?.[3], failed?.[2]].reduce(
    (sum, n) => sum + Number(n ?? 0),
    0,
  );
  const meanLatency = /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1];
  const answered = Number(/status codes: (\d+) 2xx/.exec(out)?.[1] ?? 0);
  return { perSecond: Math.round(rate), answered, errors, meanLatency };
}

/** Both protocols' maximum against the benchmark's server; optional, so the row says how. */
export async function h2loadMax(): Promise<{ result: string; data: unknown }> {
  if (!h2loadInstalled()) {
    return {
      result: h2loadMissing,
      data: null,
    };
  }
  const target = { url, authorization: auth.authorization };
  const grpc = await h2load(target, "grpc", secs(10));
  const rest = await h2load(target, "rest", secs(10));
  return {
    result: `gRPC ${grpc.perSecond}/s (mean ${grpc.meanLatency}, errors ${grpc.errors}), REST ${rest.perSecond}/s (mean ${rest.meanLatency}, errors ${rest.errors})`,
    data: { grpc, rest },
  };
}

/**
 * Publishes at `rate`/s for `seconds`, evenly spread, and answers each answer's latency: h2load
 * gives every connection its share of the rate (`--rps`) and opens the connections one per
 * 1/rate s (`-r 1 --rate-period`), so their ticks interleave instead of all connections sending
 * at once; `--log-file` has every request's time to its answer. A C client: the tail it sees is
 * the server's and the machine's, not a Node load generator's own pauses. An HTTP/1.1
 * connection cannot send while its answer is outstanding, so an answer later than one
 * connection's interval (50/rate s) would delay that connection's next request, and the
 * latencies after it would understate; `late` counts such answers. (A gRPC connection has 10
 * streams: only an answer later than 10 of its intervals could hold a request back.)
 */
async function h2loadPaced(
  target: Target,
  protocol: "grpc" | "rest",
  rate: number,
  seconds: number,
): Promise<Summary & { max: number; late: number }> {
  const file = join(work, `paced-${protocol}-${rate}.log`);
  rmSync(file, { force: true });
  const c = connections[protocol];
  const { stdout: out } = await promisify(execFile)(
    "h2load",
    [
      ...["-n", String(rate * seconds), "--rps", String(rate / c)],
      ...["-r", "1", "--rate-period", `${1000 / rate}ms`, `--log-file=${file}`],
      ...publishArgs(target, protocol),
    ],
    { encoding: "utf8" },
  );
  // Each line: start (µs since the epoch), HTTP status, µs to the answer.
  const rows = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split("\t"));
  const ms = rows.map((r) => Number(r[2]) / 1000);
  const ok = rows.filter((r) => r[1]?.startsWith("2")).length;
  const took = Number(/finished in ([\d.]+)s/.exec(out)?.[1] ?? seconds);
  const interval = (c / rate) * 1000 * streams[protocol];
  return {
    ...summarize(ms, rate * seconds - ok, took),
    max: Math.round(Math.max(...ms) * 10) / 10,
    late: ms.filter((x) => x > interval).length,
  };
}

/**
 * 500/s offered from a C client (h2load, evenly spread): the same target without a Node load
 * generator's own pauses in its latencies (loadtest runs in the benchmark's process).
 */
export async function h2loadPacedRow(name: string, protocol: "grpc" | "rest"): Promise<void> {
  const scenario = `${name} publish at 500/s offered, C client (h2load, even arrivals)`;
  if (!h2loadInstalled()) {
    record(scenario, h2loadMissing, null);
    return;
  }
  const stalls = await watchStalls(benchServer, protocol);
  const s = await h2loadPaced({ url, authorization: auth.authorization }, protocol, 500, secs(10));
  const late =
    s.late > 0
      ? ` (${s.late} answers later than a connection's interval: the p99 may understate)`
      : "";
  const inServer = await stalls();
  record(
    scenario,
    `${s.perSecond}/s, p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms, max ${s.max} ms${late}, errors ${s.errors}; ${inServer}`,
    s,
  );
  judgeP99(`${name} (h2load)`, s.p99, inServer);
}
