/**
 * Herald's logger: one readable line per event on a terminal (pino-pretty, the same fields), one
 * JSON object per line otherwise; HERALD_LOG_FORMAT decides explicitly. Output that cannot be
 * written (a closed pipe: `npm start | tee log` after Ctrl-C ended tee) is dropped: a log line
 * never ends a process, or its shutdown.
 */
import { createRequire } from "node:module";
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import type PinoPretty from "pino-pretty";

export type LogFormat = "json" | "pretty";

export interface LoggerOptions {
  level: string;
  format: LogFormat;
  /** Bound to every line: "supervisor" or "server" (with the process id, as pino does). */
  role: string;
}

/** Log lines not written yet (lineSink). */
let pending: string[] = [];
let exitHooked = false;

/**
 * What stdout may hold unwritten for a reader that stalled (a log collector, `| less` paused):
 * past it, log lines are dropped and counted, and the count is logged once stdout has taken what
 * it held. Lines for a person (`say`) are never dropped.
 */
const heldAtMostBytes = 4 * 1024 * 1024;
let dropped = 0;
/** The logger that says how many lines were dropped (the last one made). */
let noticer: Logger | undefined;

function noticeDropped(): void {
  const lines = dropped;
  dropped = 0;
  noticer?.warn(
    { dropped_lines: lines },
    `log lines dropped: stdout was not read while ${heldAtMostBytes / 1024 / 1024} MiB of them waited`,
  );
}

/** Writes the pending log lines. */
function flushLines(): void {
  const lines = pending;
  if (lines.length === 0) return;
  pending = [];
  const out = process.stdout;
  if (out.destroyed || !out.writable) return;
  if (out.writableLength > heldAtMostBytes) {
    if (dropped === 0) out.once("drain", noticeDropped);
    dropped += lines.length;
    return;
  }
  out.write(lines.length === 1 ? (lines[0] as string) : lines.join(""));
}

/**
 * Where log lines go: stdout, dropping what a closed pipe (EPIPE) or a full disk refuses. The
 * lines of one turn of the event loop go out in one write (a publish logs one line, and a group
 * commit answers its batch in one turn: one system call instead of one per line, measured at
 * 5-13 % of the publish maximum on the 2-core machine); what is pending is written before any
 * line for a person (`say`, `complain`) and at exit. pino takes any object with `write` for its
 * JSON lines: no stream, whose machinery (the string made a Buffer, a `nextTick` after each
 * write) cost 0.8-1.5 µs a line in a loop (3.0-4.0 against 2.2-2.5 µs).
 */
const lineSink = {
  write(line: string): void {
    if (pending.length === 0) setImmediate(flushLines);
    pending.push(line);
  },
};

/** The sink as a stream, for pino-pretty on a terminal. */
function lineStream(): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, done) {
      lineSink.write(String(chunk));
      done();
    },
  });
}

export function createLogger(opts: LoggerOptions): Logger {
  guardOutput();
  if (!exitHooked) {
    exitHooked = true;
    process.once("exit", flushLines);
  }
  const destination =
    opts.format === "pretty"
      ? prettyStream()({
          destination: lineStream(),
          sync: true,
          translateTime: "HH:MM:ss",
          singleLine: true,
          ignore: "hostname,pid,role",
          messageFormat: "{if role}{role}: {end}{msg}",
        })
      : lineSink;
  noticer = pino({ level: opts.level, base: { pid: process.pid, role: opts.role } }, destination);
  return noticer;
}

/** pino-pretty, loaded only for a terminal: JSON logs never hold it. */
function prettyStream(): typeof PinoPretty {
  return createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
}

let guarded = false;

/**
 * process.stdout and stderr emit `error` (EPIPE) when the reader has gone; unheard, that error
 * ends the process. Heard here once for both, and the stream is left to drop what follows.
 */
export function guardOutput(): void {
  if (guarded) return;
  guarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", () => {
      stream.destroy();
    });
  }
}

/** Writes a line for a person on stdout, unless stdout has gone. */
export function say(text: string): void {
  guardOutput();
  flushLines();
  if (!process.stdout.destroyed && process.stdout.writable) process.stdout.write(text);
}

/** Writes a line for a person on stderr, unless stderr has gone. */
export function complain(text: string): void {
  guardOutput();
  flushLines();
  if (!process.stderr.destroyed && process.stderr.writable) process.stderr.write(text);
}
