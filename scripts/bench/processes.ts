/**
 * Scenario 6 of `npm run bench`: the REST and gRPC maximum of `npm start` itself (the build, as
 * scripts/run.mjs starts it) with 1 and with 2 serving processes, their memory idle and at
 * that load, the time a replacement takes to serve, each on a fresh database of the
 * benchmark's PostgreSQL, and the group commit's batch sizes seen under that load (from the
 * processes' own /metrics).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { createDatabaseIfMissing, freePort } from "../../src/db/embedded/server.ts";
import { sampleOf, unlimited } from "./context.ts";
import { commMeter, machineMeter, threadMeter } from "./cpu-time.ts";
import { type H2loadResult, h2load } from "./h2load.ts";

/**
 * Where the machine went at a maximum, in µs of CPU a publish (at h2load's rate): the serving
 * processes (every thread) and their event loops alone, PostgreSQL, and the rest of the
 * machine's busy time (h2load, the kernel's network, the supervisor); `busiestLoop` is the
 * busiest event loop's share of a core, and `cores` the machine's busy cores.
 */
export interface MaxCpu {
  servingUs: number;
  loopUs: number;
  busiestLoop: number;
  postgresUs: number;
  restUs: number;
  cores: number;
}

export interface ProcessesResult {
  processes: number;
  rest: H2loadResult;
  grpc: H2loadResult;
  cpu: { rest: MaxCpu; grpc: MaxCpu };
  /** Batches by size bucket (`le`), summed over what the scrapes saw. */
  batches: Record<string, number>;
  meanBatch: number;
  /** Largest resident memory of the supervisor and its serving processes together, sampled. */
  peakRssMb: number;
  /** Resident memory when idle after start: the supervisor's, and each serving process's. */
  idleRssMb: { supervisor: number; serving: number[] };
  /** From SIGKILL of a serving process, idle, to its replacement listening. */
  replacementMs: number;
}

function ownRssMb(pid: number): number {
  try {
    return Math.round(
      Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) /
        1024,
    );
  } catch {
    return 0;
  }
}

export function childPids(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

/** Resident memory (MB) of a process and its children, by ps. */
function rssMb(pid: number): number {
  try {
    const own = execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" });
    let kids = "";
    try {
      kids = execFileSync("ps", ["-o", "rss=", "--ppid", String(pid)], { encoding: "utf8" });
    } catch {
      // no children (one process)
    }
    const kb = `${own}\n${kids}`
      .split("\n")
      .map((l) => Number(l.trim()) || 0)
      .reduce((a, b) => a + b, 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

/** The `npm start` servers running now, and their databases: the cleanup stops and drops any left. */
export const [running, benchDatabases] = [new Set<ChildProcess>(), new Set<string>()];

/**
 * What the benchmark reads of a server's stdout: its start-up (the first 256 KB: the address and
 * the API key) and how many "Server listening at" lines it printed. At maximum load the server
 * logs a line a request; holding all of them (a growing string, 13,000 lines a second, about
 * 40 MB a run) took memory and CPU in the benchmark's own process, on the cores the server and
 * PostgreSQL share (what it changed was within the noise of alternated runs: BENCHMARKS.md).
 */
class StartLines {
  head = "";
  listening = 0;
  #partial = "";

  add(chunk: Buffer): void {
    const s = chunk.toString();
    if (this.head.length < 256 * 1024) this.head += s;
    const text = this.#partial + s;
    const end = text.lastIndexOf("\n") + 1;
    this.#partial = text.slice(end);
    this.listening += text.slice(0, end).split("Server listening at").length - 1;
  }
}

/**
 * `npm start` on a fresh database (named after `name`), bootstrapped: its process, address, API
 * key and how many times it said it listens. Extra node options (a CPU profile) in `nodeArgs`.
 */
export async function startServer(
  root: string,
  pgServerUrl: string,
  processes: number,
  dataDir: string,
  name = `p${processes}`,
  nodeArgs: string[] = [],
) {
  const database = `herald_bench_${name}_${process.pid}`;
  await createDatabaseIfMissing(`${pgServerUrl}/postgres`, database);
  benchDatabases.add(database);
  const child = spawn(process.execPath, [...nodeArgs, join(root, "scripts/run.mjs"), "main"], {
    env: {
      ...process.env,
      DATABASE_URL: `${pgServerUrl}/${database}`,
      HERALD_BOOTSTRAP: "1",
      // A fixed port: with one serving process, a replacement of a port-0 one gets a new port.
      HERALD_PORT: String(await freePort()),
      HERALD_PROCESSES: String(processes),
      HERALD_DATA_DIR: dataDir,
      HERALD_LOG_LEVEL: "info",
      ...unlimited,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const out = new StartLines();
  child.stdout?.on("data", (c: Buffer) => out.add(c));
  const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    const timer = setInterval(() => {
      const u = /Server listening at (http:\/\/[\d.:]+)/.exec(out.head)?.[1];
      const k = /^HERALD_API_KEY=(hk_\w+)$/m.exec(out.head)?.[1];
      if (u && k) {
        clearInterval(timer);
        resolve({ url: u, key: k });
      }
    }, 50);
    child.once("exit", (code) => {
      clearInterval(timer);
      reject(new Error(`npm start exited with ${code}:\n${out.head}`));
    });
  });
  return {
    child,
    url,
    key,
    listening: () => out.listening,
    databaseUrl: `${pgServerUrl}/${database}`,
    /** SIGTERM, then its database dropped: a server the benchmark names leaves nothing behind. */
    async stop(): Promise<void> {
      const exited = new Promise((r) => child.once("exit", r));
      if (child.exitCode === null && child.kill("SIGTERM")) await exited;
      await dropBenchDatabase(pgServerUrl, database);
    },
  };
}

/** Drops a database of the benchmark's (kept with BENCH_KEEP_DB, to look into). */
export async function dropBenchDatabase(pgServerUrl: string, database: string): Promise<void> {
  benchDatabases.delete(database);
  if (process.env.BENCH_KEEP_DB) return;
  const admin = new pg.Client({ connectionString: `${pgServerUrl}/postgres` });
  await admin.connect();
  await admin
    .query(`drop database if exists "${database}" with (force)`)
    .finally(() => admin.end());
}

/** Idle: memory after start, then a serving process killed and the time to its replacement. */
async function idleAndReplacement(child: ChildProcess, listening: () => number) {
  await new Promise((r) => setTimeout(r, 2_000));
  const serving = childPids(child.pid as number);
  const idleRssMb = { supervisor: ownRssMb(child.pid as number), serving: serving.map(ownRssMb) };
  const heard = listening();
  const killedAt = performance.now();
  process.kill(serving[0] as number, "SIGKILL");
  while (listening() === heard && performance.now() - killedAt < 30_000) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const replacementMs = Math.round(performance.now() - killedAt);
  return { idleRssMb, replacementMs };
}

/** Runs `run` (h2load at full speed) while counting the CPU of the machine, by whom. */
async function measured(
  serving: number[],
  run: () => Promise<H2loadResult>,
): Promise<{ result: H2loadResult; cpu: MaxCpu }> {
  const threads = serving.map(threadMeter);
  const [postgres, machine] = [commMeter("postgres"), machineMeter()];
  const result = await run();
  const [pgCores, cores] = [postgres.share(), machine.cores()];
  const byThread = threads.map((t) => t.shares());
  const loops = byThread.map((shares) => shares.find(([name]) => name === "main")?.[1] ?? 0);
  const servingCores = byThread.flat().reduce((sum, [, share]) => sum + share, 0);
  const us = (share: number) => Math.round((share * 1e6) / Math.max(1, result.perSecond));
  const loopCores = loops.reduce((a, b) => a + b, 0);
  const cpu = {
    servingUs: us(servingCores),
    loopUs: us(loopCores),
    busiestLoop: Math.round(Math.max(0, ...loops) * 100) / 100,
    postgresUs: us(pgCores),
    restUs: us(Math.max(0, cores - servingCores - pgCores)),
    cores: Math.round(cores * 100) / 100,
  };
  return { result, cpu };
}

/**
 * `npm start` with `processes` serving processes at full speed, by h2load (a C client, as the
 * yardstick is): REST over HTTP/1.1, then gRPC over h2c, each for `seconds` after a warm-up.
 */
export async function maxWithProcesses(
  root: string,
  pgServerUrl: string,
  processes: number,
  seconds: number,
  dataDir: string,
): Promise<ProcessesResult> {
  const server = await startServer(root, pgServerUrl, processes, dataDir);
  const { child, url, key, listening } = server;
  const { idleRssMb, replacementMs } = await idleAndReplacement(child, listening);
  const target = { url, authorization: `Bearer ${key}` };
  await h2load(target, "rest", Math.min(3, seconds));
  const before = await batchBuckets(url, processes);
  let peakRssMb = 0;
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, rssMb(child.pid as number));
  }, 500);
  const serving = childPids(child.pid as number);
  const rest = await measured(serving, () => h2load(target, "rest", seconds));
  const after = await batchBuckets(url, processes);
  // Its own warm-up too, as REST has and as scenario 7 gives each protocol. (Alternated without
  // it, twice, in the twenty-fifth session: no difference above that hour's noise.)
  await h2load(target, "grpc", Math.min(3, seconds));
  const grpc = await measured(serving, () => h2load(target, "grpc", seconds));
  clearInterval(sampler);
  peakRssMb = Math.max(peakRssMb, rssMb(child.pid as number));
  await server.stop();
  const batches: Record<string, number> = {};
  for (const le of Object.keys(after.buckets)) {
    batches[le] = (after.buckets[le] ?? 0) - (before.buckets[le] ?? 0);
  }
  const count = after.count - before.count;
  return {
    processes,
    rest: rest.result,
    grpc: grpc.result,
    cpu: { rest: rest.cpu, grpc: grpc.cpu },
    batches,
    meanBatch: count > 0 ? Math.round(((after.sum - before.sum) / count) * 10) / 10 : 0,
    peakRssMb,
    idleRssMb,
    replacementMs,
  };
}

/**
 * The batch-size histogram summed over the processes: each scrape lands on one process (the
 * port hands connections round-robin), so scrape on fresh connections until every process was
 * seen, by pid.
 */
async function batchBuckets(url: string, processes: number) {
  const seen = new Map<string, string>();
  for (let i = 0; i < processes * 20 && seen.size < processes; i++) {
    const text = await (await fetch(`${url}/metrics`, { headers: { connection: "close" } })).text();
    const pid = /^herald_process_info\{pid="(\d+)"\}/m.exec(text)?.[1] ?? String(i);
    seen.set(pid, text);
  }
  const buckets: Record<string, number> = {};
  let count = 0;
  let sum = 0;
  for (const text of seen.values()) {
    for (const m of text.matchAll(/^herald_publish_batch_size_bucket\{le="([^"]+)"\} (\d+)/gm)) {
      buckets[m[1] as string] = (buckets[m[1] as string] ?? 0) + Number(m[2]);
    }
    count += sampleOf(text, "herald_publish_batch_size_count");
    sum += sampleOf(text, "herald_publish_batch_size_sum");
  }
  return { buckets, count, sum };
}
