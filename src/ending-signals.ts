/**
 * The signals that ask a Herald process to end, each handled so that nothing it started is left
 * running: Ctrl-C (SIGINT) and Ctrl-\ (SIGQUIT) in a terminal, a terminal closed (SIGHUP), and
 * `kill`, systemd or a container runtime's stop (SIGTERM). Node's default for each would end the
 * process at once, with no `finally` and no exit hook run.
 *
 * Every other signal a process may catch whose default is also to end it is handled the same way
 * (a `kill -USR2` or `kill -ALRM` by mistake, a CPU or file-size limit's warning): a stop, never
 * an end that leaves PostgreSQL behind. Left at Node's default: SIGUSR1 (it opens the inspector,
 * ends nothing), SIGPROF (V8's sampling profiler's own), the faults (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT, SIGSYS, SIGTRAP: a handler could not run safely after a real one) and SIGKILL.
 * Whatever ends a process that started PostgreSQL, its parent-death signal stops it (owner.ts).
 */
import { constants } from "node:os";

const asked = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;
const byMistake = [
  "SIGUSR2",
  "SIGALRM",
  "SIGVTALRM",
  "SIGXCPU",
  "SIGXFSZ",
  "SIGIO",
  "SIGPWR",
  "SIGSTKFLT",
] as const;

export type EndingSignal = (typeof asked)[number] | (typeof byMistake)[number];

/** The ending signals this platform has (SIGPWR and SIGSTKFLT are Linux's). */
export const endingSignals: readonly EndingSignal[] = [...asked, ...byMistake].filter(
  (s) => signalNumber(s) !== undefined,
);

/** The exit code of a process ended by `signal`, as a shell reports it: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (signalNumber(signal) ?? 0);
}

function signalNumber(signal: string): number | undefined {
  return (constants.signals as Record<string, number | undefined>)[signal];
}
