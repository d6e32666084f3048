/**
 * `listen --exec CMD`: CMD run through the shell with one notification's JSON on its standard
 * input, waited for before the next. It runs in a process group of its own, which `listen` stops
 * with itself: SIGTERM to the group as soon as `listen` is asked to stop (Ctrl-C, or any ending
 * signal sent to `listen` alone: a `kill`, a service manager, a closed terminal), SIGKILL 3 s
 * later (before `listen`'s own 5 s of grace run out), and SIGKILL when `listen` exits first (a
 * second signal). Before, a `kill` of `listen` left the command, and what it started, running.
 * With `timeoutMs` (`--exec-timeout`), a command still running then is stopped the same way, so
 * one that hangs holds the notifications after it no longer than that.
 */
import { spawn } from "node:child_process";

const hardStopMs = 3_000;
/** The process groups of the commands running now. */
const running = new Set<number>();
let stopAllOnExit = false;

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // already gone
  }
}

/** How a command ended: its exit code (127: not started), and whether its time ran out. */
export interface ExecEnd {
  code: number;
  timedOut: boolean;
}

export function runExec(
  cmd: string,
  json: string,
  env: Record<string, string | undefined>,
  stop?: AbortSignal,
  timeoutMs?: number,
): Promise<ExecEnd> {
  if (!stopAllOnExit) {
    process.once("exit", () => {
      for (const group of running) signalGroup(group, "SIGKILL");
    });
    stopAllOnExit = true;
  }
  return new Promise((resolve) => {
    const child = spawn(cmd, {
      shell: true,
      detached: true, // a process group of its own, so that what it starts is stopped with it
      stdio: ["pipe", "inherit", "inherit"],
      env: env as NodeJS.ProcessEnv,
    });
    const group = child.pid;
    let hard: NodeJS.Timeout | undefined;
    let timedOut = false;
    const onStop = () => {
      if (group === undefined || hard) return;
      signalGroup(group, "SIGTERM");
      hard = setTimeout(() => signalGroup(group, "SIGKILL"), hardStopMs);
    };
    const late =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            onStop();
          }, timeoutMs);
    const done = (code: number) => {
      if (group !== undefined) running.delete(group);
      clearTimeout(hard);
      clearTimeout(late);
      stop?.removeEventListener("abort", onStop);
      resolve({ code, timedOut });
    };
    if (group !== undefined) running.add(group);
    if (stop?.aborted) onStop();
    else stop?.addEventListener("abort", onStop, { once: true });
    child.stdin.on("error", () => {}); // a command that does not read its input
    child.stdin.end(json);
    child.on("close", (code) => done(code ?? 1));
    child.on("error", () => done(127));
  });
}
