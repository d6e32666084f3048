/**
 * Scenario 7: CPU per publish. `npm start` with one serving process at h2load's maximum, over
 * REST and over gRPC (the targets), and over Connect's binary protocol on HTTP/1.1 (the SDK's
 * default; measured, not judged): the serving process's CPU time (user + system, from /proc)
 * divided by the publishes committed meanwhile; then, in a full run (or a smoke run with
 * BENCH_CPU_PROFILE=1), a second run under --cpu-prof says where the time goes, kept in .bench/
 * and summarised by profile.ts. Last, REST and gRPC again with a CI job's failure notification
 * (bodies.ts: a message, a link, metadata) instead of the 61-byte publish: what content costs
 * (measured, not judged).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { type Body, jsonBytes, publishes } from "../bodies.ts";
import { log, outDir, record, root, secs, smoke, work } from "../context.ts";
import { cpuMeter } from "../cpu-time.ts";
import { h2load, h2loadInstalled, h2loadMissing, type Protocol } from "../h2load.ts";
import { pgServerUrl } from "../infrastructure.ts";
import { childPids, startServer } from "../processes.ts";
import { shares, topFunctions } from "../profile.ts";
import { bareMicrosPerAnswer } from "../reference-cpu.ts";
import { judge } from "../targets.ts";

export interface CpuResult {
  protocol: Protocol;
  microsPerPublish: number;
  /** Of those, the kernel's (system time: system calls, interrupts). */
  systemMicros: number;
  committedPerSecond: number;
  errors: number;
}

/** One protocol's run on a server of its own (a profile covers that run alone). */
async function measure(
  protocol: Protocol,
  profile: boolean,
  body: Body = "bench",
): Promise<CpuResult> {
  const profDir = join(work, `cpu-prof-${protocol}`);
  const nodeArgs = profile ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const server = await startServer(
    root,
    pgServerUrl,
    1,
    join(work, `data-cpu-${protocol}`),
    `cpu_${protocol}${profile ? "_profiled" : ""}${body === "bench" ? "" : `_${body}`}`,
    nodeArgs,
  );
  const db = new pg.Pool({ connectionString: server.databaseUrl, max: 1 });
  const count = async () =>
    Number((await db.query<{ n: string }>("select count(*) n from notification")).rows[0]?.n);
  try {
    const serving = childPids(server.child.pid as number)[0] as number;
    const target = { url: server.url, authorization: `Bearer ${server.key}` };
    await h2load(target, protocol, Math.min(3, secs(3)), body); // warm-up
    const [rows0, t0] = [await count(), performance.now()];
    const cpu = cpuMeter(serving);
    const run = await h2load(target, protocol, secs(10), body);
    const used = cpu.used();
    const committed = (await count()) - rows0;
    return {
      protocol,
      microsPerPublish: Math.round((used.seconds * 1e6) / Math.max(1, committed)),
      systemMicros: Math.round((used.system * 1e6) / Math.max(1, committed)),
      committedPerSecond: Math.round(committed / ((performance.now() - t0) / 1000)),
      errors: run.errors,
    };
  } finally {
    await db.end();
    await server.stop();
    if (profile) keepProfile(profDir, protocol);
  }
}

/** The serving process's profile (the biggest one: the supervisor's is idle), kept in .bench/. */
function keepProfile(dir: string, protocol: string): string | undefined {
  const files = readdirSync(dir).map((f) => join(dir, f));
  const biggest = files.sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0];
  if (!biggest) return undefined;
  mkdirSync(outDir, { recursive: true });
  const kept = join(outDir, `cpu-${protocol}.cpuprofile`);
  renameSync(biggest, kept);
  log(`    profile: ${kept}\n${topFunctions(kept, 15)}`);
  return kept;
}

/** Each protocol's name in the rows; Connect's is measured but is no target of issue 24. */
const names: Record<Protocol, string> = {
  rest: "REST",
  grpc: "gRPC",
  connect: "Connect (binary, HTTP/1.1)",
};

/** A second run under the profiler (which slows it a little): `r`'s CPU by owner, as a clause. */
async function whereItGoes(r: CpuResult): Promise<string> {
  const name = names[r.protocol];
  await measure(r.protocol, true);
  const byOwner = shares(join(outDir, `cpu-${r.protocol}.cpuprofile`)).byOwner;
  const top = byOwner.slice(0, 8);
  record(
    `CPU profile of a ${name} publish, by owner (self time)`,
    top.map(([owner, share]) => `${owner} ${(share * 100).toFixed(1)} %`).join(", "),
    top,
  );
  // The same shares as µs of the unprofiled run's CPU per publish: the profile's busy samples
  // (all but idle) are that CPU, split by owner.
  const busy = 1 - (byOwner.find(([owner]) => owner === "(idle)")?.[1] ?? 0);
  const micros = byOwner
    .filter(([owner]) => owner !== "(idle)")
    .slice(0, 10)
    .map(([owner, share]) => [owner, Math.round((share / busy) * r.microsPerPublish)] as const);
  const split = micros.map(([owner, us]) => `${owner} ${us}`).join(", ");
  record(`CPU per ${name} publish by owner, µs (of ${r.microsPerPublish})`, split, micros);
  return `µs by owner (the profile's self time): ${split}`;
}

export async function cpuPerPublish(yardstick: number): Promise<CpuResult[]> {
  log("7. CPU per publish: npm start with 1 serving process, h2load at maximum");
  if (!h2loadInstalled()) {
    record("CPU per publish", h2loadMissing, null);
    return [];
  }
  const results: CpuResult[] = [];
  for (const protocol of ["rest", "grpc", "connect"] as const) {
    const name = names[protocol];
    const r = await measure(protocol, false);
    results.push(r);
    record(
      `CPU per publish, ${name} (1 serving process, h2load)`,
      `${r.microsPerPublish} µs of the serving process's CPU per committed publish (${r.systemMicros} µs of it in the kernel); ${r.committedPerSecond}/s committed (${(r.committedPerSecond / yardstick).toFixed(2)}× the yardstick), errors ${r.errors}`,
      r,
    );
    // The machine's own floor, measured right after, before the profiled run: the target stays
    // the issue's µs, judged as such.
    const bare = protocol === "connect" ? 0 : await bareMicrosPerAnswer(protocol);
    const profiled = !smoke || process.env.BENCH_CPU_PROFILE === "1";
    const where = profiled
      ? await whereItGoes(r)
      : "not profiled in a smoke run (BENCH_CPU_PROFILE=1 profiles it)";
    if (protocol === "connect") continue;
    const floor =
      bare > 0
        ? ` (${(r.microsPerPublish / bare).toFixed(1)}× a bare Node server's ${bare} µs an answer, measured just after)`
        : "";
    judge(
      `CPU per ${name} publish ≤ 120 µs (serving process, at maximum)`,
      `${r.microsPerPublish} µs${floor}`,
      r.microsPerPublish <= 120,
      `${r.systemMicros} µs of it in the kernel (system time, /proc); ${where}`,
    );
  }
  const [ciBytes, benchBytes] = [publishes.ci, publishes.bench].map(jsonBytes);
  for (const small of results.filter((r) => r.protocol !== "connect")) {
    const r = await measure(small.protocol, false, "ci");
    record(
      `CPU per publish, ${names[r.protocol]}, a CI job's failure notification (${ciBytes} bytes of JSON; not a target)`,
      `${r.microsPerPublish} µs (${(r.microsPerPublish / small.microsPerPublish).toFixed(2)}× the ${benchBytes}-byte publish's); ${r.committedPerSecond}/s committed (${(r.committedPerSecond / yardstick).toFixed(2)}× the yardstick), errors ${r.errors}`,
      r,
    );
  }
  return results;
}
