/**
 * Calls waiting in this process for news of a key: a publisher's wait for an answer (by
 * notification id), a console's live feed (by project id). The stream hub wakes them from the
 * news it hears on PostgreSQL's channels, whichever process made it.
 */
export class Wakers {
  readonly #byKey = new Map<string, Set<() => void>>();

  /** Calls `wake` at each news of `key`; returns how to stop. */
  watch(key: string, wake: () => void): () => void {
    const set = this.#byKey.get(key) ?? new Set();
    set.add(wake);
    this.#byKey.set(key, set);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.#byKey.get(key) === set) this.#byKey.delete(key);
    };
  }

  /** News of these keys (every key watched, for `*`). */
  wake(keys: readonly string[] | "*"): void {
    for (const key of keys === "*" ? [...this.#byKey.keys()] : keys) {
      for (const wake of [...(this.#byKey.get(key) ?? [])]) wake();
    }
  }
}
