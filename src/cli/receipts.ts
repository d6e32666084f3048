/**
 * `listen`'s receipts (AckNotification), sent in the background, one at a time and in order, so
 * that the stream is read on at once: a device coming back to hundreds waiting shows them at
 * once instead of one round trip each. A receipt the device's rate limit refuses waits the
 * server's Retry-After and goes again; one that meets an outage waits a backoff (at most 5 s).
 * Neither ends the stream. What is still unsent when `listen` ends comes again in the next
 * catch-up (the cursor's own is recorded by subscribing with `since`).
 */
import { HeraldError } from "../sdk/errors.ts";

/** Answers that no retry changes: the receipt is dropped. */
const final = new Set(["not_found", "permission_denied", "invalid_argument", "unauthenticated"]);
const firstBackoffMs = 500;
const maxBackoffMs = 5_000;
/** Receipts held at most: past that the oldest are left to the next catch-up. */
const held = 10_000;

export class Receipts {
  readonly #send: (id: string) => Promise<unknown>;
  readonly #queue: string[] = [];
  /** The queued ids, to ask of. */
  readonly #queued = new Set<string>();
  #draining: Promise<void> | undefined;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(send: (id: string) => Promise<unknown>) {
    this.#send = send;
  }

  /** Queues the receipt of `id` (once). */
  add(id: string): void {
    if (this.#closed || this.#queued.has(id)) return;
    if (this.#queue.length >= held) this.#queued.delete(this.#queue.shift() as string);
    this.#queue.push(id);
    this.#queued.add(id);
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  /**
   * Whether `id`'s receipt is still on its way: the server sends it again after a reconnect, and
   * it was shown already.
   */
  has(id: string): boolean {
    return this.#queued.has(id);
  }

  /** Gives what is queued up to `ms` to go, then stops (what is left comes again next time). */
  async close(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => {
      timer = setTimeout(r, ms);
    });
    await Promise.race([this.#draining, late]);
    clearTimeout(timer);
    this.#closed = true;
    this.#wake?.();
  }

  async #drain(): Promise<void> {
    let backoff = firstBackoffMs;
    while (this.#queue.length > 0 && !this.#closed) {
      // Out of the queue while it is on its way: a full queue drops the oldest waiting, not it.
      const id = this.#queue.shift() as string;
      try {
        await this.#send(id);
        this.#queued.delete(id);
        backoff = firstBackoffMs;
      } catch (err) {
        const e = HeraldError.from(err);
        if (final.has(e.code)) {
          this.#queued.delete(id);
          continue;
        }
        this.#queue.unshift(id);
        await this.#pause(e.retryAfterMs ?? backoff);
        backoff = Math.min(maxBackoffMs, backoff * 2);
      }
    }
  }

  /** Waits `ms`, or less if closed meanwhile. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
