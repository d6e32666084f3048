/**
 * Which process owns something on disk, told so that it survives the owner's SIGKILL: a stamp
 * file holds the owner's process id and when it started. The id alone is not enough: a killed
 * owner's id may since have gone to another program, so a live process that started at another
 * time is not the owner. A stamp without that time (older Herald), or a system that cannot say
 * (no /proc, as on macOS), is judged by the id alone. The embedded PostgreSQL's `postgres.owner`
 * (db/embedded/owner.ts), the operators' scratch directories (ops/scratch.ts) and the CLI's
 * running listens (cli/running-listens.ts) use it.
 */
import { readFileSync } from "node:fs";
import { replaceWhole } from "./whole-file.ts";

export interface Stamp {
  pid: number;
  start?: string;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's (a root-owned supervisor seen by an unprivileged user).
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * When a process started, where the system says (Linux: clock ticks after boot, field 22 of
 * /proc/<pid>/stat, after the command's name in parentheses, which may hold anything).
 */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Whether the stamped process runs, and is another than this one. */
export function stampedAlive(owner: Stamp): boolean {
  if (!(owner.pid > 0) || owner.pid === process.pid || !alive(owner.pid)) return false;
  const now = owner.start === undefined ? undefined : startTimeOf(owner.pid);
  return now === undefined || now === owner.start;
}

/** The process a stamp file names, if the file is there. */
export function readStamp(file: string): Stamp | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const [pid, start] = text.trim().split(/\s+/);
  return { pid: Number(pid), start };
}

/** This process, as a stamp names it. */
export function thisProcess(): Stamp {
  const start = startTimeOf(process.pid);
  return start === undefined ? { pid: process.pid } : { pid: process.pid, start };
}

/** Stamps `file` with this process. */
export function stampThisProcess(file: string): void {
  const { start } = thisProcess();
  // Whole or not at all (whole-file.ts): a stamp cut short could name another process's id.
  replaceWhole(file, `${process.pid}${start ? ` ${start}` : ""}\n`, 0o644);
}

/** Whether the process a stamp file names has ended: a stamp of another process, not alive. */
export function stampedGone(owner: Stamp | undefined): boolean {
  return owner !== undefined && owner.pid > 0 && owner.pid !== process.pid && !stampedAlive(owner);
}
