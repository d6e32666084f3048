/**
 * How the installed CLI ends when asked to. Every ending signal (ending-signals.ts) stops the
 * command the way Ctrl-C always did, not only SIGINT: a `kill`, an agent's harness or a cancelled
 * CI job (SIGTERM) and a closed terminal (SIGHUP) included. So `herald ask` withdraws its question
 * from every device instead of leaving it to be answered into nothing, and `herald listen` gives
 * the terminal back. A command still running `graceMs` after that, or a second signal, ends
 * herald at once. A command that takes the signals itself (`herald run`, which passes each on to
 * its command and waits for it) gets every one instead.
 */
import { type EndingSignal, endingSignals, signalExitCode } from "../ending-signals.ts";
import { exit } from "./context.ts";

const defaultGraceMs = 5_000;

export function stopOnEndingSignals(graceMs = defaultGraceMs) {
  const abort = new AbortController();
  const takers = new Set<(signal: EndingSignal) => void>();
  let stoppedBy: NodeJS.Signals | undefined;
  /** Stdout refused a write for another reason than its reader going (a full disk). */
  let outputFailed = false;
  const onSignal = (signal: EndingSignal) => {
    if (takers.size > 0) {
      for (const take of takers) take(signal);
      return;
    }
    if (stoppedBy !== undefined) process.exit(signalExitCode(signal));
    stopBy(signal, `stopped by ${signal}`);
  };
  const stopBy = (signal: NodeJS.Signals, why: string) => {
    stoppedBy = signal;
    abort.abort(new Error(why));
    // The command's own code if it has ended (something else held the process open).
    const late = () =>
      process.exit(outputFailed ? exit.failed : (process.exitCode ?? signalExitCode(signal)));
    setTimeout(late, graceMs).unref();
  };
  for (const s of endingSignals) process.on(s, onSignal);
  return {
    /** Aborted by the first ending signal, or by Ctrl-C pressed as a key in raw mode. */
    abort,
    /**
     * Stdout refused a write. Its reader gone (EPIPE, `| head` has its lines): stopped as
     * SIGPIPE would stop it, but cleanly (Node ignores SIGPIPE; the write fails instead). Any
     * other failure (a full disk) stops it too, and it exits 1 whatever the command did: what
     * it printed was lost, as `cat` or `cp` exit 1 then. Given the usual grace, then ended.
     */
    outputFailed(err: NodeJS.ErrnoException): void {
      if (err.code !== "EPIPE") outputFailed = true;
      if (stoppedBy === undefined) stopBy("SIGPIPE", `its output failed: ${err.message}`);
    },
    /** For `Io.onEndingSignal`: while registered, the signals go to the command alone. */
    onEndingSignal(handler: (signal: EndingSignal) => void): () => void {
      takers.add(handler);
      return () => takers.delete(handler);
    },
    /** The command's exit code; "stopped" says which signal, as 128 + its number (130: Ctrl-C). */
    exitCode(code: number): number {
      if (outputFailed) return code === exit.ok || code === exit.canceled ? exit.failed : code;
      return stoppedBy !== undefined && code === exit.canceled ? signalExitCode(stoppedBy) : code;
    },
  };
}
