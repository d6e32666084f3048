/**
 * Whether this process should get traffic: its database answers with every migration applied,
 * and it is not draining for a shutdown. Read by `GET /readyz` and by gRPC health.
 */
export class Readiness {
  #draining = false;
  readonly #listeners = new Set<() => void>();

  readonly #databaseProblem: () => Promise<string | undefined>;

  constructor(databaseProblem: () => Promise<string | undefined>) {
    this.#databaseProblem = databaseProblem;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Why the process is not ready, or undefined when it is. */
  async problem(): Promise<string | undefined> {
    return this.#draining ? "draining for a shutdown" : await this.#databaseProblem();
  }

  /** From now on the process is not ready; watchers hear of it at once. */
  drain(): void {
    this.#draining = true;
    for (const listener of this.#listeners) listener();
  }

  /** Calls `listener` when the process starts draining; returns the unsubscribe. */
  onDrain(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
