/** How a CLI command fails: its exit codes, and the error that carries one and its words. */

/** Documented exit codes (docs/cli.md). 130: stopped with Ctrl-C, as shells count it. */
export const exit = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  network: 4,
  /** `herald ask`: the person said no (a `--deny` action, or dismissed the question). */
  denied: 5,
  /** `herald ask`: no answer in time (as timeout(1) exits). */
  timedOut: 124,
  canceled: 130,
} as const;

/** A failure told as it is: its message on stderr, its exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = exit.failed, options?: ErrorOptions) {
    super(message, options);
    this.exitCode = exitCode;
  }
}
