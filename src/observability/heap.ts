/**
 * Gives back the memory a start-up used. Loading the modules and opening the database allocate
 * far more than an idle process keeps: V8 grows its young generation for them and keeps the
 * pages. One last-resort collection once the process is up (the kind V8 runs when memory runs
 * low) shrinks the young generation and returns the freed pages, about 20 MB of RSS per process
 * (BENCHMARKS.md, "Memory"). The young generation grows back under load as before.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type Collect = (options: { type: "major"; execution: "sync"; flavor?: "last-resort" }) => void;

/**
 * V8's `gc`, exposed to a new context only: the process's own global scope never gets it. (The
 * benchmark's process uses it too, to start a row with nothing an earlier row left.)
 */
export function fullCollection(): Collect {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as Collect;
}

export function releaseStartupMemory(): void {
  const collect = fullCollection();
  setImmediate(() => collect({ type: "major", execution: "sync", flavor: "last-resort" }));
}
