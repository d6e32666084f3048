/**
 * A worker's send outcomes, written to the queue in batches: a batch goes once `batch` outcomes
 * wait, or `delayMs` after the first of them, and while one batch's statement runs the next
 * collects. A fan-out's sends finish a few at a time; written as they came, 10,000 outcomes took
 * ~300 statements, batched ~130 (BENCHMARKS.md, issue 24).
 */
import type { DeliveryQueue, DueDelivery, Outcome } from "../db/index.ts";

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
  readonly #batch: number;
  readonly #delayMs: number;
  readonly #onWrite: (outcomes: number) => void;

  /** `onWrite`: told each statement's number of outcomes (a metric). */
  constructor(
    queue: Pick<DeliveryQueue, "settle">,
    onWrite: (outcomes: number) => void = () => {},
    batch = 200,
    delayMs = 10,
  ) {
    this.#queue = queue;
    this.#onWrite = onWrite;
    this.#batch = batch;
    this.#delayMs = delayMs;
  }

  /** Resolves once the outcome is recorded; rejects with the statement's error. */
  write(delivery: DueDelivery, outcome: Outcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ delivery, outcome, resolve, reject });
      if (this.#waiting.length >= this.#batch) this.#writeNow();
      else this.#timer ??= setTimeout(() => this.#writeNow(), this.#delayMs);
    });
  }

  #writeNow(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writing ??= this.#write();
  }

  async #write(): Promise<void> {
    do {
      const batch = this.#waiting.splice(0, 1000);
      this.#onWrite(batch.length);
      try {
        await this.#queue.settle(batch);
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    } while (this.#waiting.length >= this.#batch);
    this.#writing = undefined;
    if (this.#waiting.length > 0) this.#timer ??= setTimeout(() => this.#writeNow(), this.#delayMs);
  }
}
