/** CPU time, to say where the time goes when a target is missed. */
import { readFileSync } from "node:fs";

/** A process's CPU seconds so far (user + system, from /proc; clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Starts counting a process's CPU; `share()` says how much of one core it used since. */
export function cpuMeter(pid: number) {
  const [cpu0, t0] = [cpuSeconds(pid), performance.now()];
  return {
    seconds: () => cpuSeconds(pid) - cpu0,
    share: () => (cpuSeconds(pid) - cpu0) / ((performance.now() - t0) / 1000),
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
