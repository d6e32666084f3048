/** Percentiles and formatting for the benchmark report. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export interface Summary {
  count: number;
  errors: number;
  perSecond: number;
  p50: number;
  p90: number;
  p99: number;
}

export function summarize(latenciesMs: number[], errors: number, seconds: number): Summary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    count: sorted.length,
    errors,
    perSecond: Math.round(sorted.length / seconds),
    p50: r(percentile(sorted, 50)),
    p90: r(percentile(sorted, 90)),
    p99: r(percentile(sorted, 99)),
  };
}

/** Runs `fn` from `concurrency` loops for `seconds`, or at `rate`/s when given; latencies in ms. */
export async function drive(
  fn: () => Promise<void>,
  opts: { seconds: number; concurrency: number; rate?: number },
): Promise<Summary> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + opts.seconds * 1000;
  const once = async () => {
    const t = performance.now();
    try {
      await fn();
      latencies.push(performance.now() - t);
    } catch {
      errors++;
    }
  };
  if (opts.rate) {
    const interval = 1000 / opts.rate;
    const inflight = new Set<Promise<void>>();
    for (let next = performance.now(); next < end; next += interval) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const p: Promise<void> = once().finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
  } else {
    await Promise.all(
      Array.from({ length: opts.concurrency }, async () => {
        while (performance.now() < end) await once();
      }),
    );
  }
  return summarize(latencies, errors, opts.seconds);
}
