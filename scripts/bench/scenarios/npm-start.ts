/**
 * Scenario 6: `npm start` itself with 1 and 2 serving processes, each driven by h2load over REST
 * and gRPC (the measure: a C client, as the yardstick's), and group commit's batch sizes.
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { processCount } from "../../../src/config-parse.ts";
import { log, record, root, secs, work } from "../context.ts";
import type { H2loadResult } from "../h2load.ts";
import { pgServerUrl } from "../infrastructure.ts";
import { type MaxCpu, maxWithProcesses } from "../processes.ts";
import { judge } from "../targets.ts";

/** A maximum's CPU a publish, by whom: which of them was the limit. */
function machineSplit(cpu: MaxCpu, processes: number): string {
  const serving = processes > 1 ? `the ${processes} serving processes` : "the serving process";
  const loops =
    processes > 1
      ? `their event loops ${cpu.loopUs} µs, the busiest ${cpu.busiestLoop} of a core`
      : `its event loop ${cpu.loopUs} µs, ${cpu.busiestLoop} of a core`;
  return `CPU a publish: ${serving} ${cpu.servingUs} µs (${loops}), PostgreSQL ${cpu.postgresUs} µs, the rest of the machine (h2load, the kernel) ${cpu.restUs} µs; the machine ${cpu.cores} of ${availableParallelism()} cores`;
}

/**
 * The yardstick again, just before and just after `run` (the default's maxima): this machine's
 * limit drifts by 10 % within minutes (BENCHMARKS.md, twenty-seventh session), so the verdicts
 * compare each maximum with the machine's limit measured around it, their mean.
 */
async function bracketed<T>(yardstick: () => Promise<number>, run: () => Promise<T>) {
  const before = await yardstick();
  const result = await run();
  const after = await yardstick();
  const near = Math.round((before + after) / 2);
  record(
    "Yardstick again, around the default's maxima (pgbench, as above)",
    `${before}/s just before, ${after}/s just after: ${near}/s, the limit the maxima are judged against`,
    { before, after, near },
  );
  return { result, near };
}

export async function npmStart(
  commitRate: number,
  yardstick: () => Promise<number>,
): Promise<void> {
  // --- 6. npm start with 1 and 2 processes, and group commit's batch sizes ------------------
  log("6. npm start itself: REST and gRPC maximum (h2load) with 1 and 2 serving processes");
  const byDefault = processCount({});
  for (const n of [1, 2]) {
    const max = () => maxWithProcesses(root, pgServerUrl, n, secs(10), join(work, `data-p${n}`));
    const judged = n === byDefault && !Number.isNaN(commitRate);
    const { result: r, near } = judged
      ? await bracketed(yardstick, max)
      : { result: await max(), near: Number.NaN };
    const ratio = (perSecond: number) =>
      (Number.isNaN(commitRate) ? "" : `, ${(perSecond / commitRate).toFixed(2)}× the yardstick`) +
      (Number.isNaN(near) ? "" : `, ${(perSecond / near).toFixed(2)}× the yardstick around it`);
    const each = (name: string, h: H2loadResult) =>
      `${name} ${h.perSecond}/s (mean ${h.meanLatency}, errors ${h.errors}${ratio(h.perSecond)})`;
    record(
      `Publish maximum, npm start with ${n} process${n > 1 ? "es" : ""}${n === byDefault ? " (the default here)" : ""}, h2load`,
      `${each("REST", r.rest)}; ${each("gRPC", r.grpc)}; memory of all its processes at that load: ${r.peakRssMb} MB; idle: supervisor ${r.idleRssMb.supervisor} MB, serving ${r.idleRssMb.serving.join(" + ")} MB; a killed serving process replaced and listening in ${r.replacementMs} ms`,
      r,
    );
    const total = r.batches["+Inf"] ?? 0;
    const dist = Object.entries(r.batches)
      .filter(([le]) => le !== "+Inf")
      .map(([le, c], i, all) => {
        const below = i > 0 ? (all[i - 1]?.[1] ?? 0) : 0;
        return `≤${le}: ${total ? Math.round(((c - below) / total) * 100) : 0}%`;
      })
      .join(", ");
    record(
      `group commit batch sizes at that maximum (${n} process${n > 1 ? "es" : ""})`,
      `mean ${r.meanBatch} publishes per commit; ${total} commits: ${dist}`,
      { mean: r.meanBatch, batches: r.batches },
    );
    const split = {
      REST: machineSplit(r.cpu.rest, n),
      gRPC: machineSplit(r.cpu.grpc, n),
    };
    record(
      `where the machine went at that maximum (${n} process${n > 1 ? "es" : ""})`,
      `REST: ${split.REST}. gRPC: ${split.gRPC}`,
      r.cpu,
    );
    if (!judged) continue;
    for (const [name, h] of [
      ["REST", r.rest],
      ["gRPC", r.grpc],
    ] as const) {
      judge(
        `${name} maximum on the default \`npm start\` ≥ 1.0× the yardstick (stretch 1.5×)`,
        `${(h.perSecond / near).toFixed(2)}× (${h.perSecond}/s against ${near}/s measured around it; ${(h.perSecond / commitRate).toFixed(2)}× the run's first, ${commitRate}/s)`,
        h.perSecond >= near,
        `${split[name]}; group commit: mean ${r.meanBatch} publishes a commit, ${dist}; the serving process's CPU split by owner: scenario 7's rows`,
      );
    }
  }
}
