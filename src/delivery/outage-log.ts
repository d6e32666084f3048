/**
 * A background loop's failures while the database is away, said once per outage: the first
 * failure that means the database cannot be reached is logged as a warning, with what it was;
 * the next ones are counted, not logged; the first round that works after says it is back, with
 * how many failed and for how long. Any other failure is logged each time, as it comes. Before,
 * a database restart logged the delivery worker's and the webhook worker's failed rounds, each
 * with its stack, about nine times a second in every serving process.
 */
import { isDatabaseUnavailable } from "../db/index.ts";
import { monotonicMs } from "../domain/clock.ts";
import type { Log } from "../domain/log.ts";

export class OutageLog {
  readonly #log: Log;
  readonly #what: string;
  #since: number | undefined;
  #failed = 0;

  /** `what`: the loop, as the lines name it ("the delivery worker"). */
  constructor(log: Log, what: string) {
    this.#log = log;
    this.#what = what;
  }

  /** Logs `err` as `msg` (with `fields`), unless the database is away: that is said once. */
  failed(err: unknown, msg: string, fields: Record<string, unknown> = {}): void {
    if (!isDatabaseUnavailable(err)) {
      this.#log.error({ err, ...fields }, msg);
      return;
    }
    this.#failed++;
    if (this.#since !== undefined) return;
    this.#since = monotonicMs();
    const reason = err instanceof Error ? err.message : String(err);
    this.#log.warn({ reason }, `${this.#what}: the database is unavailable; waiting for it`);
  }

  /** A round that reached the database: an outage that was said ends. */
  succeeded(): void {
    if (this.#since === undefined) return;
    this.#log.info(
      { failed_rounds: this.#failed, down_ms: Math.round(monotonicMs() - this.#since) },
      `${this.#what}: the database is back`,
    );
    [this.#since, this.#failed] = [undefined, 0];
  }
}
