/**
 * How the supervisor stops, whatever asks it to: every serving process is drained (SIGTERM, then
 * SIGKILL past the grace period), the embedded PostgreSQL is shut down last (fast shutdown,
 * waited for), and one line tells a person that Herald stopped.
 *
 * - A terminal's Ctrl-C reaches the whole process group, and npm forwards the same signal again:
 *   a repeat within a second is that echo, not a second request.
 * - A second request later shortens the drain (the serving processes are killed; what they had
 *   not recorded is sent again by the next start, as after a crash) but never skips the
 *   database's stop.
 * - Output that cannot be written (a closed pipe) is dropped, never thrown.
 * - An unexpected error in the supervisor stops everything the same way, with exit code 1.
 */
import type { Worker } from "node:cluster";
import type { Logger } from "pino";
import { monotonicMs } from "../domain/clock.ts";
import { endingSignals } from "../ending-signals.ts";
import { complain, say } from "../observability/logger.ts";

export interface StoppingOptions {
  log: Logger;
  graceMs: number;
  workers: () => Worker[];
  beforeDrain: () => void;
  stopDatabase: () => Promise<void>;
}

const echoMs = 1_000;

export class Stopping {
  readonly #o: StoppingOptions;
  #started: number | undefined;
  #done: Promise<void> | undefined;
  #hurry: (() => void) | undefined;

  constructor(opts: StoppingOptions) {
    this.#o = opts;
  }

  get started(): boolean {
    return this.#started !== undefined;
  }

  /** Signals and unexpected errors stop the supervisor; nothing ends it without the database. */
  listen(): void {
    for (const signal of endingSignals) {
      process.on(signal, () => void this.stop(signal));
    }
    process.on("uncaughtException", (err) => {
      this.#o.log.error({ err }, "unexpected error in the supervisor");
      void this.stop(`herald: an unexpected error: ${err.message}`, 1);
    });
    process.on("unhandledRejection", (err) => {
      this.#o.log.error({ err }, "unexpected rejection in the supervisor");
    });
  }

  say(text: string): void {
    say(text);
  }

  /** Starts stopping (once); a later call shortens the drain. Exits the process when done. */
  stop(why: string, code = 0): Promise<void> {
    if (this.#started !== undefined) {
      if (monotonicMs() - this.#started >= echoMs && this.#hurry) {
        this.#o.log.warn({ why }, "asked again: ending the serving processes now");
        this.#hurry();
      }
      return this.#done as Promise<void>;
    }
    this.#started = monotonicMs();
    this.#done = this.#run(why, code);
    return this.#done;
  }

  async #run(why: string, code: number): Promise<void> {
    const { log } = this.#o;
    if (code === 0) log.info({ why }, "stopping");
    else log.error({ why }, "stopping");
    try {
      this.#o.beforeDrain();
      await this.#drain();
    } catch (err) {
      log.error({ err }, "draining the serving processes failed");
    }
    try {
      await this.#o.stopDatabase();
    } catch (err) {
      log.error({ err }, "stopping PostgreSQL failed");
      code ||= 1;
    }
    if (code !== 0) complain(`${why}\n`);
    this.say("Herald stopped.\n");
    process.exit(code);
  }

  async #drain(): Promise<void> {
    const workers = this.#o.workers();
    const killAll = () => {
      for (const w of workers) if (!w.isDead()) w.process.kill("SIGKILL");
    };
    this.#hurry = killAll;
    // Past the grace period and then some, a process that still runs is ended.
    const late = setTimeout(killAll, this.#o.graceMs + 5_000);
    try {
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              w.once("exit", () => resolve());
              w.process.kill("SIGTERM");
            }),
        ),
      );
    } finally {
      clearTimeout(late);
    }
  }
}
