/**
 * Big fan-outs leave the planner's statistics of the delivery table stale (a claim then plans
 * for an empty table): once fan-outs have made `afterPushes` pushes in all, they are refreshed
 * (queue.analyze), at most once a minute, without waiting for it.
 */
import type { Log } from "../domain/log.ts";

export class StatisticsRefresh {
  #pushes = 0;
  #last = Number.NEGATIVE_INFINITY;
  readonly #analyze: () => Promise<void>;
  readonly #log: Log;
  readonly #afterPushes: number;

  constructor(analyze: () => Promise<void>, log: Log, afterPushes = 2000) {
    [this.#analyze, this.#log, this.#afterPushes] = [analyze, log, afterPushes];
  }

  /** A fan-out made `pushes` push deliveries. */
  fannedOut(pushes: number): void {
    this.#pushes += pushes;
    if (this.#pushes < this.#afterPushes || performance.now() - this.#last < 60_000) return;
    [this.#last, this.#pushes] = [performance.now(), 0];
    this.#analyze().catch((err: unknown) => {
      this.#log.warn({ err }, "refreshing the delivery table's statistics failed");
    });
  }
}
