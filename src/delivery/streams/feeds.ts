/**
 * Consoles' live feeds watched in this process, by project id, and the news of projects this
 * process's group commit fanned out, told to every process (this one included) on the feed
 * channel. The batches do not NOTIFY themselves (db/notifications/feed-news.ts says why): their
 * news of one `windowMs` goes out in one NOTIFY after their commits, so a feed hears of a publish
 * at most `windowMs` later than it would have, well inside the feed's own 100 ms settling. While
 * news keeps coming, NOTIFYs leave at most one per `busyGapMs`: at the publish maximum, one every
 * 10 ms was a hundred PostgreSQL transactions (each a commit) a second and 2 % of the serving
 * process's CPU (BENCHMARKS.md, twenty-ninth session); a feed then hears of a publish up to
 * `busyGapMs` later. News lost with a crash between a commit and its NOTIFY shows at the feed's
 * next refresh (5 s).
 */
import { feedPayloadOf } from "../../db/index.ts";
import type { Log } from "../../domain/log.ts";
import { Wakers } from "./wakers.ts";

/** How long news of a fanned-out project waits for more before it is told. */
const windowMs = 10;
/** The shortest time between two NOTIFYs of news. */
const busyGapMs = 100;

export class Feeds extends Wakers {
  readonly #send: (payload: string) => Promise<unknown>;
  readonly #log: Log;
  #pending = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  /** When the last NOTIFY left (performance.now(): a clock set back must not hold news). */
  #lastSent = Number.NEGATIVE_INFINITY;

  /** `send` NOTIFYs the feed channel with a payload. */
  constructor(send: (payload: string) => Promise<unknown>, log: Log) {
    super();
    this.#send = send;
    this.#log = log;
  }

  /** Tells every process, within `windowMs`, that these projects' notifications changed. */
  tell(projectIds: readonly string[]): void {
    for (const id of projectIds) this.#pending.add(id);
    if (this.#pending.size === 0 || this.#timer) return;
    const wait = Math.max(windowMs, this.#lastSent + busyGapMs - performance.now());
    this.#timer = setTimeout(() => this.#flush(), wait).unref();
  }

  #flush(): void {
    this.#timer = undefined;
    this.#lastSent = performance.now();
    const payload = feedPayloadOf(this.#pending);
    this.#pending = new Set();
    this.#send(payload).catch((err: unknown) => {
      this.#log.warn({ err }, "telling the live feeds failed; they refresh within 5 s");
    });
  }
}
