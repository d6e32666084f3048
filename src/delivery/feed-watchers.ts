/**
 * Consoles' live feeds in this process (NotifyService.WatchNotifications): each watches one
 * project and is woken when its notifications may have changed. The stream hub tells it, from
 * the fan-out's news (the projects it fanned out, from any process: `*` for all) and from inbox
 * news (an acknowledgement, an answer, a withdrawal: any project's watchers look again).
 */
export class FeedWatchers {
  readonly #byProject = new Map<string, Set<() => void>>();

  /** Calls `wake` whenever the project's notifications may have changed; returns how to stop. */
  watch(projectId: string, wake: () => void): () => void {
    const set = this.#byProject.get(projectId) ?? new Set();
    set.add(wake);
    this.#byProject.set(projectId, set);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.#byProject.get(projectId) === set)
        this.#byProject.delete(projectId);
    };
  }

  /** News: comma-separated project ids, or `*` for every project. */
  changed(projects: string | undefined): void {
    if (!projects || this.#byProject.size === 0) return;
    const ids = projects === "*" ? [...this.#byProject.keys()] : projects.split(",");
    for (const id of ids) for (const wake of [...(this.#byProject.get(id) ?? [])]) wake();
  }
}
