/**
 * What one live stream has to send. Notifications reach it two ways: handed over in memory by
 * the process that committed them (before their deliveries exist), and as ids of committed
 * deliveries (the fan-out's news, a catch-up). Each is sent once: an id already sent from memory
 * is only marked when its delivery's news comes; one already sent is not sent again. The
 * catch-up's ids come before anything that arrived live meanwhile: a stream is in order.
 */

import type { DeviceRow } from "../../db/index.ts";
import { backlogPage } from "../../db/index.ts";
import type { NotificationRecord } from "../../domain/notification.ts";
import type { QuietHours } from "../../domain/quiet-hours.ts";
import type { StreamFilter } from "./hub.ts";

/** Ids remembered as sent; past this the memory starts again (only early overlap needs it). */
const rememberSent = 10_000;
/** Ids sent from memory awaiting their delivery's news; past this the oldest are forgotten. */
const rememberUnmarked = 10_000;
/** Most ids loaded and marked at once. */
const batchSize = 500;

export function filterOf(device: DeviceRow | null): StreamFilter | undefined {
  return device ? { accountId: device.accountId, topics: device.topics } : undefined;
}

export class StreamInbox {
  readonly deviceId: string;
  /** The device's quiet hours, as of its last change: its notifications are marked quiet. */
  quiet: QuietHours | null = null;
  /** Called when something arrives; the stream loop sets it while it waits. */
  wake: (() => void) | undefined;
  /** The device was signed out (or removed): the stream ends. */
  signedOut = false;
  #handed: NotificationRecord[] = [];
  /** Each id once, in the order it came; at most `#mostWaiting`. */
  readonly #committed = new Set<string>();
  #overflowed = false;
  readonly #mostWaiting: number;
  readonly #behind: string[] = [];
  readonly #sent = new Set<string>();
  readonly #unmarked = new Set<string>();
  #repeats: string[] = [];
  #cleared: { id: string; by: string }[] = [];
  readonly #clearedIds = new Set<string>();

  /**
   * `most`: committed ids held for the stream (config.ts's `streamHeldIds`); past this they are
   * let go, and the stream catches up from the database once it writes again (`takeOverflow`).
   * A client that stops reading (a `herald listen` suspended with Ctrl-Z, a hostile one) holds
   * its stream at a write while the hub goes on telling it of ids: live ones, and every 30 s its
   * pending ones again. Before, they were all kept, repeats included, while it did not read.
   */
  constructor(deviceId: string, most: number) {
    this.deviceId = deviceId;
    this.#mostWaiting = most;
  }

  /** Ids and rows held for the stream, not sent yet. */
  get held(): number {
    return this.#committed.size + this.#handed.length;
  }

  /**
   * Whether the ids let go past `mostWaiting` must be caught up from the database: said once.
   * What was handed over in memory is let go with them (it comes with its fan-out's news).
   */
  takeOverflow(): boolean {
    const overflowed = this.#overflowed;
    this.#overflowed = false;
    return overflowed;
  }

  handed(row: NotificationRecord): void {
    // Rows wait here while the stream catches up; past this the oldest wait for their fan-out's
    // news instead (only the way changes: news brings every one, loaded from the database).
    if (this.#handed.length >= rememberUnmarked) this.#handed.shift();
    this.#handed.push(row);
    this.wake?.();
  }

  /** A page of the catch-up: sent before any committed id that arrived live. */
  behind(ids: readonly string[]): void {
    this.#behind.push(...ids);
  }

  committed(ids: readonly string[]): void {
    if (ids.length === 0) return;
    for (const id of ids) this.#committed.add(id);
    if (this.#committed.size > this.#mostWaiting) {
      this.#committed.clear();
      this.#handed = [];
      this.#overflowed = true;
    }
    this.wake?.();
  }

  /** Sent again while awaiting acknowledgement: sent whatever was sent before. */
  repeated(ids: readonly string[]): void {
    this.#repeats.push(...ids);
    this.wake?.();
  }

  /** Once per notification: a hub that listens again clears what it may have heard of before. */
  cleared(id: string, by: string): void {
    if (this.#clearedIds.has(id)) return;
    this.#clearedIds.add(id);
    if (this.#clearedIds.size > rememberUnmarked) {
      this.#clearedIds.delete(this.#clearedIds.values().next().value as string);
    }
    this.#cleared.push({ id, by });
    this.wake?.();
  }

  takeRepeats(): string[] {
    const ids = this.#repeats;
    this.#repeats = [];
    return ids;
  }

  takeCleared(): { id: string; by: string }[] {
    const c = this.#cleared;
    this.#cleared = [];
    return c;
  }

  /** Rows handed over in memory and not sent yet, now counted as sent. */
  takeHanded(): NotificationRecord[] {
    const rows = this.#handed.filter((r) => !this.#sent.has(r.id));
    this.#handed = [];
    for (const r of rows) {
      this.#remember(r.id);
      this.#unmarked.add(r.id);
      if (this.#unmarked.size > rememberUnmarked) {
        this.#unmarked.delete(this.#unmarked.values().next().value as string);
      }
    }
    return rows;
  }

  /**
   * Committed ids, of the catch-up while `catchingUp`, else those that arrived live: those to
   * load and send, and those sent from memory only to mark.
   */
  takeCommitted(catchingUp = false): { load: string[]; mark: string[] } {
    const ids = catchingUp ? this.#behind.splice(0, batchSize) : this.#firstCommitted();
    const mark: string[] = [];
    const load: string[] = [];
    for (const id of ids) {
      if (this.#unmarked.delete(id)) mark.push(id);
      else if (!this.#sent.has(id)) {
        this.#remember(id);
        load.push(id);
      }
    }
    return { load, mark };
  }

  #firstCommitted(): string[] {
    const ids: string[] = [];
    for (const id of this.#committed) {
      if (ids.length === batchSize) break;
      ids.push(id);
      this.#committed.delete(id); // a Set's iteration goes on past an entry deleted
    }
    return ids;
  }

  #remember(id: string): void {
    if (this.#sent.size >= rememberSent) {
      this.#sent.clear();
      for (const u of this.#unmarked) this.#sent.add(u);
    }
    this.#sent.add(id);
  }
}

/**
 * A catch-up read a page at a time: the next page is read once the stream has written the one
 * before, so a large backlog (a device away for a while, a process killed under load) reaches
 * the client at the stream's own pace, its first message at once, and in full.
 */
export class Backlog {
  readonly #read: (after: string | undefined) => Promise<string[]>;
  readonly #pageSize: number;
  #after: string | undefined;
  #more = true;

  constructor(read: (after: string | undefined) => Promise<string[]>, pageSize = backlogPage) {
    this.#read = read;
    this.#pageSize = pageSize;
  }

  get more(): boolean {
    return this.#more;
  }

  async next(): Promise<string[]> {
    const page = await this.#read(this.#after);
    this.#more = page.length >= this.#pageSize;
    this.#after = page.at(-1) ?? this.#after;
    return page;
  }
}
