/**
 * What every part of `npm run bench` shares: the command line (`--smoke`, `--only N[,M…]`),
 * the scratch directory, and the report's rows, recorded as each scenario measures them.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import type { Summary } from "./stats.ts";

export const smoke = process.argv.includes("--smoke");
/** `--only N[,M…]` runs only those scenarios (and the setup they need). */
const onlyArg = process.argv.indexOf("--only");
const only = onlyArg > 0 ? (process.argv[onlyArg + 1] ?? "").split(",").map(Number) : undefined;
export const want = (n: number) => only === undefined || only.includes(n);
/** A scenario's duration: `full` seconds, or 1 in a smoke run. */
export const secs = (full: number) => (smoke ? 1 : full);
export const root = resolve(import.meta.dirname, "../..");
/** Where the report and profiles go: .bench/, or BENCH_OUT_DIR (the tests' runs: not a person's). */
export const outDir = process.env.BENCH_OUT_DIR || join(root, ".bench");
export const work = mkdtempSync(join(os.tmpdir(), "herald-bench-"));
export const log = (s: string) => process.stderr.write(`${s}\n`);

export const rows: { scenario: string; result: string }[] = [];
export const json: Record<string, unknown> = {};
export const record = (scenario: string, result: string, data: unknown) => {
  rows.push({ scenario, result });
  json[scenario] = data;
  log(`  ${scenario}: ${result}`);
};
export const fmt = (s: Summary) =>
  `${s.perSecond}/s, p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms, errors ${s.errors}`;

/** The server's limits out of the benchmark's way: it measures speed, not the limits. */
export const unlimited = {
  HERALD_RATE_LIMIT_BURST: "1000000",
  HERALD_RATE_LIMIT_PER_SECOND: "1000000",
  HERALD_ACCOUNT_RATE_BURST: "1000000",
  HERALD_ACCOUNT_RATE_PER_SECOND: "1000000",
  HERALD_MONTHLY_QUOTA: "1000000000",
};

export { benchNotification } from "./bodies.ts";

/** One series' value in a Prometheus text scrape (`name{labels} value`; `name` with its labels), 0 when absent. */
export function sampleOf(scrape: string, series: string): number {
  const line = scrape.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
