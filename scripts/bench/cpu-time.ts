/** CPU time, to say where the time goes when a target is missed. */
import { readdirSync, readFileSync } from "node:fs";

/**
 * A /proc stat file's name (comm), CPU seconds (user + system; clock ticks of 1/100 s), and of
 * those the kernel's (system).
 */
function statOf(file: string): { comm: string; seconds: number; system: number } {
  const stat = readFileSync(file, "utf8");
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    comm: stat.slice(stat.indexOf("(") + 1, close),
    seconds: (Number(fields[11]) + Number(fields[12])) / 100,
    system: Number(fields[12]) / 100,
  };
}

/** CPU seconds of what `list` names, each read from `file(entry)`; entries gone are skipped. */
function secondsBy(list: string[], file: (entry: string) => string) {
  const out = new Map<string, { comm: string; seconds: number }>();
  for (const entry of list) {
    try {
      out.set(entry, statOf(file(entry)));
    } catch {
      // ended between the listing and the read
    }
  }
  return out;
}

/**
 * A process's CPU by thread, summed by the threads' names: its event loop ("main"), and Node's
 * other threads (worker_threads "WorkerThread", V8's GC and compiler helpers "V8Worker",
 * libuv's pool "libuv-worker"); `shares()` says how much of one core each used since.
 */
export function threadMeter(pid: number) {
  const read = () =>
    secondsBy(readdirSync(`/proc/${pid}/task`), (tid) => `/proc/${pid}/task/${tid}/stat`);
  const [before, t0] = [read(), performance.now()];
  return {
    shares(): [string, number][] {
      const wall = (performance.now() - t0) / 1000;
      const by = new Map<string, number>();
      for (const [tid, now] of read()) {
        const name = tid === String(pid) ? "main" : now.comm;
        const used = now.seconds - (before.get(tid)?.seconds ?? 0);
        by.set(name, (by.get(name) ?? 0) + used / wall);
      }
      return [...by].sort((a, b) => b[1] - a[1]);
    },
  };
}

/**
 * Every process on the machine named `comm` (PostgreSQL's server and its backends), as shares
 * of one core since the start; a process started meanwhile counts whole.
 */
export function commMeter(comm: string) {
  const read = () => {
    const pids = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
    const all = secondsBy(pids, (pid) => `/proc/${pid}/stat`);
    return new Map([...all].filter(([, s]) => s.comm === comm));
  };
  const [before, t0] = [read(), performance.now()];
  return {
    share(): number {
      let used = 0;
      for (const [pid, now] of read()) used += now.seconds - (before.get(pid)?.seconds ?? 0);
      return used / ((performance.now() - t0) / 1000);
    },
  };
}

/**
 * Starts counting a process's CPU; `share()` says how much of one core it used since, and
 * `used()` its CPU seconds since and how many of them were the kernel's (system calls,
 * interrupts), from one reading.
 */
export function cpuMeter(pid: number) {
  const file = `/proc/${pid}/stat`;
  const [start, t0] = [statOf(file), performance.now()];
  const used = () => {
    const now = statOf(file);
    return { seconds: now.seconds - start.seconds, system: now.system - start.system };
  };
  return {
    used,
    seconds: () => used().seconds,
    share: () => used().seconds / ((performance.now() - t0) / 1000),
  };
}

/** The machine's busy CPU seconds so far, over all cores (/proc/stat: user, nice, system, irq, softirq). */
function machineBusySeconds(): number {
  const [, ...ticks] = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/);
  return [0, 1, 2, 5, 6].reduce((sum, i) => sum + Number(ticks[i] ?? 0), 0) / 100;
}

/** Starts counting the whole machine's CPU; `cores()` says how many cores were busy since. */
export function machineMeter() {
  const [busy0, t0] = [machineBusySeconds(), performance.now()];
  return { cores: () => (machineBusySeconds() - busy0) / ((performance.now() - t0) / 1000) };
}

/**
 * A thread's time on a core and its time runnable but waiting for one (the scheduler's run
 * queue: /proc/<pid>/task/<tid>/schedstat, ns), since the start; the event loop's thread by
 * default. A loop "held" for 20 ms on a 2-core machine may have been another process's turn:
 * this tells that share apart from the loop's own work. Undefined where the kernel keeps no
 * schedstat.
 */
export function runQueueMeter(pid: number, tid = pid) {
  const file = `/proc/${pid}/task/${tid}/schedstat`;
  const read = () => {
    const [ran = 0, waited = 0] = readFileSync(file, "utf8").split(" ").map(Number);
    return { ran, waited };
  };
  let start: { ran: number; waited: number };
  try {
    start = read();
  } catch {
    return undefined;
  }
  return () => {
    const now = read();
    return { ranS: (now.ran - start.ran) / 1e9, waitedS: (now.waited - start.waited) / 1e9 };
  };
}

/**
 * "waited 1.21 s for a core (it ran 3.40 s, 680 µs a publish)": a run-queue meter's reading, as
 * a clause; the time on a core per publish when `publishes` says how many it served meanwhile.
 */
export function runQueueClause(meter: ReturnType<typeof runQueueMeter>, publishes = 0): string {
  if (meter === undefined) return "";
  const { ranS, waitedS } = meter();
  const each = publishes > 0 ? `, ${Math.round((ranS * 1e6) / publishes)} µs a publish` : "";
  return ` and waited ${waitedS.toFixed(2)} s in all for a core (it ran ${ranS.toFixed(2)} s${each})`;
}
