/**
 * Open files against the process's limit. At the limit, the kernel refuses new sockets, and
 * libuv answers it by accepting each new connection and closing it at once (its spare
 * descriptor trick): clients see resets, and nothing else says why. So each serving process
 * looks every few seconds and says it once when its open files pass 90 % of the limit (a
 * warning), and once when they are back under 80 %. `process_open_fds` and `process_max_fds`
 * in /metrics give the same numbers to an alert (docs/operations.md).
 *
 * Reading /proc takes a descriptor too, which a process at its limit has not got: the watch
 * keeps one spare (of /dev/null) and gives it up for the moment of its look, in one synchronous
 * run of code, so nothing else can take it meanwhile (libuv's accept runs between them).
 */
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";
import type { Log } from "../domain/log.ts";

const highShare = 0.9;
const backShare = 0.8;

/** The soft limit on open files (`Max open files` in /proc/self/limits); undefined off Linux. */
function openFilesLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) && soft > 0 ? soft : undefined;
  } catch {
    return undefined;
  }
}

/** Opens the spare descriptor; -1 when there is none to be had (taken at the limit). */
const spareFd = () => {
  try {
    return openSync("/dev/null", "r");
  } catch {
    return -1;
  }
};

/** This process's open files (the spare not counted) and their limit, read on the spare. */
function look(spare: number): { open: number; limit: number | undefined } | undefined {
  if (spare >= 0) closeSync(spare);
  try {
    // Read each time: a limit can change under a running process (prlimit). The listing
    // counts its own descriptor.
    return { limit: openFilesLimit(), open: readdirSync("/proc/self/fd").length - 1 };
  } catch {
    return undefined;
  }
}

/** Watches this process's open files every `everyMs`; returns how to stop. */
export function watchOpenFiles(log: Log, everyMs = 5_000): () => void {
  if (openFilesLimit() === undefined) return () => {};
  let high = false;
  let spare = spareFd();
  const timer = setInterval(() => {
    const seen = look(spare);
    spare = spareFd();
    const limit = seen?.limit;
    if (seen === undefined || limit === undefined) return;
    const open = seen.open;
    const fields = { open_files: open, limit };
    if (!high && open >= limit * highShare) {
      high = true;
      log.warn(
        fields,
        `open files at ${Math.round((100 * open) / limit)} % of the limit (${open} of ${limit}): at the limit new connections are reset; raise it (LimitNOFILE, ulimit -n) or look for a leak`,
      );
    } else if (high && open < limit * backShare) {
      high = false;
      log.info(fields, `open files back under ${backShare * 100} % of the limit`);
    }
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (spare >= 0) closeSync(spare);
  };
}
