/**
 * How long a supervisor waits before replacing a serving process, given how many processes in
 * a row died young in its place: at once for the first (an idle machine serves again within a
 * second), then 0.5 s, doubling, capped at 30 s, so that a process that keeps crashing by itself
 * costs little CPU and floods no log.
 *
 * Never more than 1 s when the death came from outside (a signal: SIGKILL, the OOM killer) or
 * when no other process serves: backing off must not leave the server serving nothing while
 * someone kills its processes in quick succession.
 */
export const restartBackoff = { firstMs: 500, maxMs: 30_000, urgentMaxMs: 1_000 } as const;

export interface DeathContext {
  /** Whether another process of the pool is serving now. */
  othersServing: boolean;
  /** Whether a signal ended it (rather than an exit of its own). */
  bySignal: boolean;
}

export function restartDelayMs(
  youngDeaths: number,
  { othersServing, bySignal }: DeathContext = { othersServing: true, bySignal: false },
): number {
  if (youngDeaths <= 1) return 0;
  const delay = Math.min(restartBackoff.maxMs, restartBackoff.firstMs * 2 ** (youngDeaths - 2));
  return othersServing && !bySignal ? delay : Math.min(delay, restartBackoff.urgentMaxMs);
}
