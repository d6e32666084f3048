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
    const late = () => process.exit(process.exitCode ?? signalExitCode(signal));
    setTimeout(late, graceMs).unref();
  };
  for (const s of endingSignals) process.on(s, onSignal);
  return {
    /** Aborted by the first ending signal, or by Ctrl-C pressed as a key in raw mode. */
    abort,
    /**
     * Stdout's reader has gone (EPIPE): stopped as SIGPIPE would stop it, but cleanly (Node
     * ignores SIGPIPE; the write fails instead). Given the usual grace, then ended.
     */
    outputClosed(): void {
      if (stoppedBy === undefined) stopBy("SIGPIPE", "its output was closed");
    },
    /** For `Io.onEndingSignal`: while registered, the signals go to the command alone. */
    onEndingSignal(handler: (signal: EndingSignal) => void): () => void {
      takers.add(handler);
      return () => takers.delete(handler);
    },
    /** The command's exit code; "stopped" says which signal, as 128 + its number (130: Ctrl-C). */
    exitCode(code: number): number {
      return stoppedBy !== undefined && code === exit.canceled ? signalExitCode(stoppedBy) : code;
    },
  };
}
