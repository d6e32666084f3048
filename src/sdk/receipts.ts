/**
 * Receipts sent in the background, in order, by `herald listen` and the console's stream device,
 * so that the stream is read on at once: those waiting go together (InboxService.ConfirmReceipts,
 * up to 300 a call), so a device coming back to hundreds shows them at once and confirms them in
 * a call or two, where it made one round trip, and one request of the rate limits, each. A call
 * the device's rate limit refuses waits the server's Retry-After and goes again; one that meets
 * an outage waits a backoff (at most 5 s). Neither ends the stream. What is still unsent when the
 * stream ends comes again in the next catch-up (the cursor's own is recorded by subscribing with
 * `since`).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { HeraldError } from "./errors.ts";

/** Answers that no retry changes: the receipt is dropped. */
const final = new Set(["not_found", "permission_denied", "invalid_argument", "unauthenticated"]);
const firstBackoffMs = 500;
const maxBackoffMs = 5_000;
/** Receipts held at most: past that the oldest are left to the next catch-up. */
const held = 10_000;

/** How a receipt goes: many at once, or (to a server from before ConfirmReceipts) one. */
export interface ReceiptCalls {
  many: (ids: string[]) => Promise<unknown>;
  one: (id: string) => Promise<unknown>;
}

export class Receipts {
  readonly #send: ReceiptCalls;
  #most: number;
  readonly #queue: string[] = [];
  /** The queued ids, to ask of. */
  readonly #queued = new Set<string>();
  #draining: Promise<void> | undefined;
  #closed = false;
  #wake: (() => void) | undefined;

  /** `most`: receipts in one call at most. */
  constructor(send: ReceiptCalls, most = 300) {
    this.#send = send;
    this.#most = most;
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
    let timer: ReturnType<typeof setTimeout> | undefined;
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
      // Out of the queue while on their way: a full queue drops the oldest waiting, not these.
      const ids = this.#queue.splice(0, this.#most);
      try {
        await (this.#most === 1 ? this.#send.one(ids[0] as string) : this.#send.many(ids));
        for (const id of ids) this.#queued.delete(id);
        backoff = firstBackoffMs;
      } catch (err) {
        // A server from before ConfirmReceipts (no such route): one call each from now on.
        const older = this.#most > 1 && ConnectError.from(err).code === Code.Unimplemented;
        if (older) this.#most = 1;
        const e = HeraldError.from(err);
        if (!older && final.has(e.code)) {
          for (const id of ids) this.#queued.delete(id);
          continue;
        }
        this.#queue.unshift(...ids);
        if (older) continue;
        // Added meanwhile past the most held: the oldest go (the next catch-up brings them).
        while (this.#queue.length > held) this.#queued.delete(this.#queue.shift() as string);
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
