/**
 * Who runs the embedded PostgreSQL of a data directory. PostgreSQL's own `postmaster.pid` says
 * that a server runs on a cluster and on which port; `postgres.owner`, beside it in the data
 * directory, says which Herald process started it (the supervisor of `npm start`, or an
 * operator's command that found none running). A running server whose owner is alive belongs
 * to someone: an operator's command uses it and never stops it, and a second `npm start`
 * refuses to start. One whose owner is gone is an orphan: the next `npm start` stops it before
 * starting its own. On Linux an owner's death, however it comes (SIGKILL included), stops its
 * PostgreSQL at once (`tiedToOwner`), so an orphan is what a system without setpriv leaves.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import {
  alive,
  readStamp,
  type Stamp,
  stampedAlive,
  stampedGone,
  stampThisProcess,
} from "../../process-stamp.ts";
import { relocatedClusterDir } from "./user.ts";

export interface RunningCluster {
  /** The postmaster's process id. */
  pid: number;
  port: number;
  /** The Herald process that started it, if it is still alive. */
  owner: number | undefined;
}

/** util-linux's setpriv, where the system has it (Linux's; Debian's util-linux is essential). */
const setpriv =
  process.platform === "linux"
    ? ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p))
    : undefined;

/**
 * The command line that runs `command` so that it gets SIGINT (PostgreSQL's fast shutdown) when
 * the process that starts it dies, however it dies: SIGKILL, a fault, a signal left at Node's
 * default. That is Linux's parent-death signal, set by setpriv, which then execs the command
 * (the setting survives exec; the spawn changes user before setpriv runs, which would clear
 * it). Where there is no setpriv, or if the owner dies in the instant before setpriv sets it,
 * the next start stops the orphan.
 */
export function tiedToOwner(command: string, args: string[]): [string, string[]] {
  return setpriv ? [setpriv, ["--pdeathsig", "INT", "--", command, ...args]] : [command, args];
}

/**
 * False when the system says (Linux's /proc) that `pid` runs another program than a PostgreSQL
 * on `pgDir`: the postmaster.pid of a PostgreSQL that was killed names a process id the system
 * may since have given to anything (ids come round in minutes where they go up to 32768). True
 * where it cannot say (no /proc, as on macOS, or not readable): then a live id is taken as one.
 */
export function mayServe(pid: number, pgDir: string): boolean {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return true;
  }
  const at = args.indexOf("-D");
  return (
    basename(args[0] ?? "") === "postgres" &&
    at > 0 &&
    resolve(args[at + 1] ?? "") === resolve(pgDir)
  );
}

/** What the cluster's postmaster.pid says: the postmaster's process id, and its port. */
function lockFile(pgDir: string): { pid: number; port: number } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(pgDir, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  return Number.isInteger(pid) && pid > 0 ? { pid, port: Number(lines[3]) } : undefined;
}

/**
 * Removes a postmaster.pid that names another program's process (PostgreSQL refuses to start
 * beside a lock file naming any live process). True when it did.
 */
export function clearStaleLock(pgDir: string): boolean {
  const lock = lockFile(pgDir);
  if (!lock || !alive(lock.pid) || mayServe(lock.pid, pgDir)) return false;
  rmSync(join(pgDir, "postmaster.pid"), { force: true });
  return true;
}

const ownerFile = (dataDir: string) => join(dataDir, "postgres.owner");

/** The PostgreSQL running on `pgDir` (from its postmaster.pid), if one is. */
export function runningCluster(dataDir: string, pgDir: string): RunningCluster | undefined {
  const lock = lockFile(pgDir);
  if (!lock || !alive(lock.pid) || !mayServe(lock.pid, pgDir)) return undefined;
  const { pid, port } = lock;
  const owner = recordedOwner(dataDir);
  return { pid, port, owner: owner && stampedAlive(owner) ? owner.pid : undefined };
}

/** The process `postgres.owner` names (its id, and when it started), if the file is there. */
function recordedOwner(dataDir: string): Stamp | undefined {
  return readStamp(ownerFile(dataDir));
}

/** Records this process as the owner of the data directory's PostgreSQL, and when it started. */
export function claimOwnership(dataDir: string): void {
  stampThisProcess(ownerFile(dataDir));
}

/** Forgets the owner, if it is this process. */
export function releaseOwnership(dataDir: string): void {
  if (recordedOwner(dataDir)?.pid === process.pid) rmSync(ownerFile(dataDir), { force: true });
}

/** Stops an orphaned PostgreSQL (fast shutdown), waiting up to 10 s. */
export async function stopOrphan(pid: number, pgDir: string): Promise<void> {
  try {
    process.kill(pid, "SIGINT");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return; // it ended meanwhile
    throw err;
  }
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) throw new Error(`PostgreSQL (pid ${pid}) on ${pgDir} did not stop`);
}

/**
 * For a data directory nobody will start on again (the benchmark's scratch directories are new
 * every run, so startEmbeddedPostgres' own check never sees them again): stops the PostgreSQL
 * a dead owner left running on it (its owner was SIGKILLed, so its exit hook never ran). True
 * when the directory is abandoned, its owner gone and nothing running on it any more; false
 * when its owner lives, or it never had one (a run still starting).
 */
export async function stopAbandoned(dataDir: string): Promise<boolean> {
  // Where startEmbeddedPostgres puts the cluster: in the directory, or relocated (user.ts).
  for (const pgDir of [join(dataDir, "pg"), relocatedClusterDir(dataDir)]) {
    const running = runningCluster(dataDir, pgDir);
    if (running?.owner !== undefined) return false;
    if (running) {
      await stopOrphan(running.pid, pgDir);
      return true;
    }
  }
  return stampedGone(recordedOwner(dataDir));
}

/**
 * Removes what runs SIGKILLed or interrupted left in `parent`: the directories named `prefix…`
 * (the benchmark's scratch, the test suite's cluster) whose owner has ended, after stopping any
 * PostgreSQL still running on one (stopAbandoned), with their relocated clusters. A directory
 * whose owner lives, or that has none yet (a run starting), stays. Returns those removed.
 */
export async function removeAbandoned(parent: string, prefix: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of readdirSync(parent)) {
    const dir = join(parent, name);
    if (!name.startsWith(prefix) || !(await stopAbandoned(dir))) continue;
    rmSync(dir, { recursive: true, force: true });
    rmSync(relocatedClusterDir(dir), { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
