/**
 * Notifications that asked for acknowledgement and got none are sent again at their interval:
 * their push copies become pending again, and the live streams are told.
 */
import type { Job } from "./clock.ts";

export const repeatUnacknowledged: Job = (d) => async () => {
  const repeated = await d.queue.repeatDue(d.batch, d.ackIntervalScale);
  if (repeated.length > 0) d.onRepeated(repeated);
};
