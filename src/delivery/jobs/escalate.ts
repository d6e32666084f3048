/**
 * What nobody acknowledged in time escalates: a new, high-priority notification to the
 * escalation topic and project (db/notifications/acknowledgements.ts, `escalateDue`).
 */
import type { Job } from "./clock.ts";

export const escalate: Job = (d) => async () => {
  await d.queue.escalateDue(d.batch);
};
