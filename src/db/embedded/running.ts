/**
 * The embedded PostgreSQL's process, kept running for as long as its owner wants it: started,
 * then, when it exits without being asked (the OOM killer, a `kill`, a crash), started again on
 * the same port, so that the serving processes' connection URL still holds and their pools
 * reconnect (docs/operations.md, "Database"). It recovers from its write-ahead
 * log as after any crash: nothing committed is lost. A start that fails (a killed postmaster's
 * backends still hold its shared memory for a moment, say) is tried again after 0.5 s, doubling
 * to 30 s. Before, Herald answered 503 to everything until a person restarted it. One shut down
 * cleanly (exit code 0: `pg_ctl stop`, another start stopping what it took for an orphan) was
 * asked to stop by someone: it is said, and left stopped.
 */
import type { ChildProcess } from "node:child_process";
import pg from "pg";

const maxBackoffMs = 30_000;
/** How long a stop waits for a fast shutdown before an immediate one. */
const fastStopMs = 20_000;

/**
 * Exited unasked (started again), back, a start again failed, or shut down by someone else; its
 * log file cannot be written (lines dropped), or can again; a stop that had to be forced.
 */
export type EmbeddedEvent =
  | "exited"
  | "back"
  | "failed"
  | "stopped"
  | "log-lost"
  | "log-back"
  | "stop-forced";

export interface KeptPostgresOptions {
  /** Starts one postmaster (same flags and port each time). */
  launch(): ChildProcess;
  /** Where to check that it accepts connections. */
  adminUrl: string;
  /** Told when it exits unasked, and when it is back. */
  say?: (event: EmbeddedEvent, detail: string) => void;
  /** Why the last one launched ended, in its own words (its FATAL line and DETAIL), if it said. */
  lastWords?: () => string | undefined;
}

export class KeptPostgres {
  readonly #o: KeptPostgresOptions;
  #child: ChildProcess | undefined;
  #stopping = false;
  #timer: NodeJS.Timeout | undefined;
  /** However the owner ends, its PostgreSQL ends with it: a fast shutdown, asked at exit. */
  readonly #atExit = () => {
    const c = this.#child;
    if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGINT");
  };

  constructor(options: KeptPostgresOptions) {
    this.#o = options;
    process.once("exit", this.#atExit);
  }

  /** Starts it and waits until it accepts connections; fails if it exits first. */
  async start(): Promise<void> {
    const child = this.#o.launch();
    this.#child = child;
    await ready(child, this.#o.adminUrl, this.#o.lastWords);
    this.#watch(child);
  }

  #watch(child: ChildProcess): void {
    child.once("exit", (code, signal) => {
      if (this.#stopping || child !== this.#child) return;
      if (signal === null && code === 0) {
        this.#o.say?.("stopped", "exit code 0");
        return;
      }
      this.#o.say?.("exited", signal ? `signal ${signal}` : `exit code ${code}`);
      this.#again(0);
    });
  }

  #again(attempt: number): void {
    const delay = attempt === 0 ? 0 : Math.min(maxBackoffMs, 250 * 2 ** attempt);
    this.#timer = setTimeout(() => {
      if (this.#stopping) return;
      this.start().then(
        () => this.#o.say?.("back", `after ${attempt + 1} start(s)`),
        (err: unknown) => {
          this.#o.say?.("failed", (err as Error).message);
          this.#again(attempt + 1);
        },
      );
    }, delay);
  }

  /**
   * Fast shutdown (SIGINT: in-flight transactions are rolled back), and wait for it. One not
   * done in `fastStopMs` (a storage stall, a held process) is shut down at once (SIGQUIT: it
   * recovers from its write-ahead log at the next start, nothing committed lost); one still
   * running 5 s later is killed with its backends (its process group: spawned detached). Before,
   * the stop waited as long as PostgreSQL did, and Ctrl-C did nothing more.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    process.off("exit", this.#atExit);
    const c = this.#child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const done = new Promise<void>((resolve) => c.once("exit", () => resolve()));
    c.kill("SIGINT");
    const group = (signal: NodeJS.Signals) => {
      try {
        process.kill(-(c.pid as number), signal);
      } catch {
        c.kill(signal); // no group of its own (it ended meanwhile, or was not spawned detached)
      }
    };
    let kill: NodeJS.Timeout | undefined;
    const immediate = setTimeout(() => {
      this.#o.say?.(
        "stop-forced",
        `no fast shutdown within ${fastStopMs / 1000} s; immediate shutdown`,
      );
      group("SIGQUIT");
      kill = setTimeout(() => {
        this.#o.say?.("stop-forced", "no immediate shutdown within 5 s; killed");
        group("SIGKILL");
      }, 5_000);
    }, fastStopMs);
    await done;
    clearTimeout(immediate);
    clearTimeout(kill);
  }
}

/** Waits until the server accepts connections; fails if it exits first. */
async function ready(
  postgres: ChildProcess,
  adminUrl: string,
  lastWords: () => string | undefined = () => undefined,
): Promise<void> {
  let exited: number | null | undefined;
  postgres.once("exit", (code) => {
    exited = code;
  });
  for (let i = 0; i < 600; i++) {
    if (exited !== undefined) {
      // Why, in PostgreSQL's words: before, only the exit code, and the reason in its log.
      const why = lastWords();
      throw new Error(`PostgreSQL exited with ${exited} while starting${why ? `: ${why}` : ""}`);
    }
    const client = new pg.Client({ connectionString: adminUrl });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error("PostgreSQL did not accept connections within 30 s");
}
