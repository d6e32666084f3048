/**
 * Scheduled notifications whose time has come become `queued`: the fan-out of the same round
 * sends them (docs/api.md, "Scheduled delivery").
 */
import type { Job } from "./clock.ts";

export const releaseScheduled: Job = (d) => async () => {
  await d.queue.releaseDue(d.batch);
};
