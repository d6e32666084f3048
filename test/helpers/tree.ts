/** The processes below a process, read from `ps`, for tests of supervision and stopping. */
import { execFileSync } from "node:child_process";

export interface Row {
  pid: number;
  ppid: number;
  args: string;
}

function table(): Row[] {
  return execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const [pid, ppid, ...args] = l.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(" ") };
    });
}

/** Every process below `root` (children, grandchildren, …). */
export function descendants(root: number): Row[] {
  const rows = table();
  const found: Row[] = [];
  const walk = (pid: number) => {
    for (const r of rows.filter((x) => x.ppid === pid)) {
      found.push(r);
      walk(r.pid);
    }
  };
  walk(root);
  return found;
}

/** The serving processes a supervisor forked. */
export function servingProcesses(supervisor: number): number[] {
  return descendants(supervisor)
    .filter((r) => r.ppid === supervisor && /dist\/server[-\d]*\/src\/main\.js/.test(r.args))
    .map((r) => r.pid);
}

/** Whether a process runs (the supervisor's own check, from src/db/embedded/owner.ts). */
export { alive } from "../../src/process-stamp.ts";
