/**
 * Retention runs where the worker runs: shortly after start, then every hour. One purge at a
 * time per process; several processes may purge at once (the repository skips locked rows).
 */
import type { RetentionRepository } from "../db/index.ts";
import type { Log } from "../domain/log.ts";

/** The first purge waits for start-up to settle; then one an hour. */
const firstPurgeMs = 10_000;
const purgeEveryMs = 3_600_000;

export class RetentionTimer {
  readonly #retention: RetentionRepository;
  readonly #days: number;
  readonly #log: Log;
  readonly #timers: NodeJS.Timeout[] = [];
  #purging: Promise<void> | undefined;

  constructor(retention: RetentionRepository, days: number, log: Log) {
    this.#retention = retention;
    this.#days = days;
    this.#log = log;
  }

  start(): void {
    const purge = () => this.#purge();
    this.#timers.push(
      setTimeout(purge, firstPurgeMs).unref(),
      setInterval(purge, purgeEveryMs).unref(),
    );
  }

  #purge(): void {
    this.#purging ??= this.#retention
      .purge(this.#days)
      .then((purged) => {
        if (Object.values(purged).some((n) => n > 0))
          this.#log.info({ ...purged, retention_days: this.#days }, "retention purge");
      })
      .catch((err: unknown) => this.#log.warn({ err }, "retention purge failed"))
      .finally(() => {
        this.#purging = undefined;
      });
  }

  /** Stops the timers and waits for a purge under way. */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    await this.#purging;
  }
}
