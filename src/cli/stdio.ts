/**
 * The installed CLI's standard input and output as its commands use them (context.ts's `Io`):
 * prompts and single keys on a terminal, standard input read whole, and stdout's drain.
 */
import { spawnSync } from "node:child_process";
import { fstatSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { CliError, exit } from "./context.ts";

/** Reads one line from the terminal; with `hidden`, what is typed is not echoed. */
export function promptOnTerminal(question: string, hidden: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Ctrl-C (readline takes it as a key) or Ctrl-D: nothing is done, as a "no" would. Before,
    // the prompt never settled and Node ended the process with a warning (exit 13).
    let answered = false;
    rl.on("SIGINT", () => rl.close());
    rl.on("close", () => {
      if (answered) return;
      process.stderr.write("\n");
      reject(new CliError("canceled: nothing done", exit.canceled));
    });
    if (hidden) {
      // readline echoes through _writeToOutput; print the question only.
      (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
        if (s.startsWith(question)) process.stderr.write(question);
      };
    }
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      if (hidden) process.stderr.write("\n");
      resolve(answer);
    });
  });
}

/**
 * Standard input, when it is a file or a pipe (a terminal, or /dev/null in a CI step, has
 * nothing to say). With `waitMs`, a pipe that says nothing within that time is left alone.
 */
export async function readStdin(waitMs?: number): Promise<string | undefined> {
  const st = fstatSync(0);
  if (process.stdin.isTTY || !(st.isFIFO() || st.isFile())) return undefined;
  if (waitMs !== undefined && st.isFIFO()) {
    const spoke = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), waitMs);
      process.stdin.once("readable", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!spoke) {
      process.stdin.pause();
      process.stdin.unref?.();
      return undefined;
    }
  }
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Whether this process's group holds its terminal. A background job's (`herald listen &`, or
 * `bg` after Ctrl-Z) does not, and must leave the terminal alone: setting its mode or reading it
 * would have the terminal stop the job (SIGTTOU, SIGTTIN), as it stopped `listen &` at once.
 * Undefined where /proc cannot say (macOS).
 */
function foregroundByProc(): boolean | undefined {
  try {
    // After the command's name: state, ppid, pgrp, session, tty_nr, tpgid (proc(5)).
    const stat = readFileSync("/proc/self/stat", "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return f[2] === f[5];
  } catch {
    return undefined;
  }
}

/** As foregroundByProc, or as ps says; when neither can say, the terminal is taken as before. */
function inForeground(): boolean {
  const byProc = foregroundByProc();
  if (byProc !== undefined) return byProc;
  const ps = spawnSync("ps", ["-o", "pgid=,tpgid=", "-p", String(process.pid)], {
    encoding: "utf8",
  });
  const [pgid, tpgid] = (ps.stdout ?? "").trim().split(/\s+/);
  return !pgid || pgid === tpgid;
}

/**
 * Key presses from a terminal, in raw mode while someone listens (Ctrl-C then arrives as a key,
 * not a signal: it aborts as SIGINT would). Ctrl-Z too arrives as a key: the terminal is given
 * back and the job stopped (SIGTSTP to its process group, as the terminal would send), and the
 * keys are taken again when it runs again in the foreground (`fg`). A job in the background
 * (`&`, `bg`) takes no keys and leaves the terminal as it is (its output still shows); `fg`
 * gives it them.
 */
export function keysOnTerminal(abort: AbortController) {
  return (handler: (key: string) => void) => {
    let held = false;
    // (A "data" listener alone would set stdin flowing: it is added only with the terminal.)
    const take = () => {
      if (held || !inForeground()) return;
      held = true;
      process.stdin.setRawMode(true);
      process.stdin.on("data", onData);
      process.stdin.resume();
    };
    const release = () => {
      if (!held) return;
      held = false;
      process.stdin.setRawMode(false);
      process.stdin.off("data", onData);
      process.stdin.pause();
    };
    const suspend = () => {
      release();
      // Discarded when no shell's job control stands above it (an orphaned process group).
      process.kill(0, "SIGTSTP");
      take();
    };
    const onData = (d: Buffer) => {
      for (const key of d.toString("utf8")) {
        if (key === "\x03") abort.abort();
        else if (key === "\x1a") suspend();
        else handler(key);
      }
    };
    take();
    process.on("SIGCONT", take);
    // A running job brought to the foreground (`fg` after `&`) is sent no SIGCONT: where /proc
    // makes it cheap, the background job asks twice a second whether it holds the terminal yet.
    const asking =
      foregroundByProc() === undefined ? undefined : setInterval(() => held || take(), 500).unref();
    return () => {
      clearInterval(asking);
      process.off("SIGCONT", take);
      release();
    };
  };
}

/**
 * Whether stdout took what it was given: once it has (a pipe's reader may be behind), false if
 * the command stopped first. A write that fails says so a tick later, and stops the command
 * (main.ts): process.stdout itself never reads as destroyed or closed, so the stop is the sign.
 */
export async function drained(signal: AbortSignal): Promise<boolean> {
  const out = process.stdout;
  await new Promise((resolve) => setImmediate(resolve));
  if (out.writableNeedDrain && !signal.aborted) {
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off("drain", done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      out.once("drain", done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
  return !signal.aborted && !out.writableNeedDrain;
}

/** Once stdout has written (or failed) what it was given before. */
export function flushed(): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.write("", () => setImmediate(resolve));
  });
}
