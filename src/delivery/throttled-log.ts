/**
 * A line that would come once per send, said at most once a minute per key: the ones held back
 * in between are counted in the next (`held_back`). A push provider that refuses Herald's
 * configuration refuses every send, and a fan-out to 10,000 phones logged 10,000 error lines.
 */
import { monotonicMs } from "../domain/clock.ts";
import type { Log } from "../domain/log.ts";

/** Keys kept at most (a few: platforms); past this they start again. */
const keysKept = 100;

export class ThrottledLog {
  readonly #log: Log;
  readonly #everyMs: number;
  readonly #now: () => number;
  readonly #last = new Map<string, { at: number; held: number }>();

  constructor(log: Log, everyMs = 60_000, now: () => number = monotonicMs) {
    this.#log = log;
    this.#everyMs = everyMs;
    this.#now = now;
  }

  error(key: string, fields: Record<string, unknown>, msg: string): void {
    const now = this.#now();
    const last = this.#last.get(key);
    if (last && now - last.at < this.#everyMs) {
      last.held++;
      return;
    }
    this.#log.error(last?.held ? { ...fields, held_back: last.held } : fields, msg);
    if (this.#last.size >= keysKept) this.#last.clear();
    this.#last.set(key, { at: now, held: 0 });
  }
}
