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

/** Writes to a file descriptor, dropping what a closed pipe (EPIPE) or a full disk refuses. */
function fdStream(fd: 1 | 2): Writable {
  const stream = fd === 1 ? process.stdout : process.stderr;
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      if (stream.destroyed || !stream.writable) return done();
      stream.write(chunk, () => done());
    },
  });
}

export function createLogger(opts: LoggerOptions): Logger {
  guardOutput();
  const destination =
    opts.format === "pretty"
      ? prettyStream()({
          destination: fdStream(1),
          sync: true,
          translateTime: "HH:MM:ss",
          singleLine: true,
          ignore: "hostname,pid,role",
          messageFormat: "{if role}{role}: {end}{msg}",
        })
      : fdStream(1);
  return pino({ level: opts.level, base: { pid: process.pid, role: opts.role } }, destination);
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
  if (!process.stdout.destroyed && process.stdout.writable) process.stdout.write(text);
}

/** Writes a line for a person on stderr, unless stderr has gone. */
export function complain(text: string): void {
  guardOutput();
  if (!process.stderr.destroyed && process.stderr.writable) process.stderr.write(text);
}
