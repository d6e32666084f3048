/**
 * A command that is interrupted leaves nothing behind: an operator's (`backup`, `restore`,
 * `reencrypt-tokens`, `owner:reset-password`), the benchmark, the soak run. Each thing it must undo
 * is registered here while it holds it: the embedded PostgreSQL it started (stopped: a fast
 * shutdown, waited for), the servers it runs, the scratch copy of the tables and a half-written
 * archive (removed). On an ending signal those run, newest
 * first, and the command then exits as the signal would have ended it (128 + its number). A
 * second signal within a second is the same request again (a terminal's Ctrl-C and npm's echo
 * of it); a later one exits at once (the exit still asks a PostgreSQL it started to stop).
 */

import { monotonicMs } from "../domain/clock.ts";
import { type EndingSignal, endingSignals, signalExitCode } from "../ending-signals.ts";

type Undo = () => void | Promise<void>;

const undos: Undo[] = [];
let listening = false;
/** When the first ending signal came. */
let interruptedAt: number | undefined;

/** Registers `undo` until the returned function is called (the command let go of it itself). */
export function onInterrupt(undo: Undo): () => void {
  listen();
  undos.push(undo);
  return () => {
    const i = undos.indexOf(undo);
    if (i >= 0) undos.splice(i, 1);
  };
}

/** Whether an ending signal came: the command's own failure is then that, and not told. */
export const interrupted = (): boolean => interruptedAt !== undefined;

function listen(): void {
  if (listening) return;
  listening = true;
  for (const signal of endingSignals) process.on(signal, () => void interrupt(signal));
}

async function interrupt(signal: EndingSignal): Promise<void> {
  const code = signalExitCode(signal);
  if (interruptedAt !== undefined) {
    if (monotonicMs() - interruptedAt >= 1_000) process.exit(code);
    return;
  }
  interruptedAt = monotonicMs();
  process.stderr.write(`interrupted by ${signal}: stopping what this command started\n`);
  for (const undo of undos.splice(0).reverse()) {
    try {
      await undo();
    } catch (err) {
      process.stderr.write(`  (could not: ${(err as Error).message})\n`);
    }
  }
  process.exit(code);
}
