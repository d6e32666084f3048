/**
 * A worker's send outcomes, written to the queue in batches: a batch goes once `batch` (200)
 * outcomes wait, or `delayMs` (10 ms) after the first of them, and while one batch's statement
 * runs the next collects. A fan-out's sends finish a few at a time; written as they came, 10,000
 * outcomes took ~300 statements, batched ~130 (BENCHMARKS.md, issue 24).
 */
import type { DeliveryQueue, DueDelivery, Outcome } from "../db/index.ts";

const batch = 200;
const delayMs = 10;

interface Waiting {
  delivery: DueDelivery;
  outcome: Outcome;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class OutcomeWriter {
  readonly #waiting: Waiting[] = [];
  #writing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  readonly #queue: Pick<DeliveryQueue, "settle">;
  readonly #onWrite: (outcomes: number) => void;

  /** `onWrite`: told each statement's number of outcomes (a metric). */
  constructor(queue: Pick<DeliveryQueue, "settle">, onWrite: (outcomes: number) => void) {
    this.#queue = queue;
    this.#onWrite = onWrite;
  }

  /** Resolves once the outcome is recorded; rejects with the statement's error. */
  write(delivery: DueDelivery, outcome: Outcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ delivery, outcome, resolve, reject });
      if (this.#waiting.length >= batch) this.#writeNow();
      else this.#timer ??= setTimeout(() => this.#writeNow(), delayMs);
    });
  }

  #writeNow(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writing ??= this.#write();
  }

  async #write(): Promise<void> {
    do {
      const outcomes = this.#waiting.splice(0, 1000);
      this.#onWrite(outcomes.length);
      try {
        await this.#queue.settle(outcomes);
        for (const o of outcomes) o.resolve();
      } catch (err) {
        for (const o of outcomes) o.reject(err);
      }
    } while (this.#waiting.length >= batch);
    this.#writing = undefined;
    if (this.#waiting.length > 0) this.#timer ??= setTimeout(() => this.#writeNow(), delayMs);
  }
}
