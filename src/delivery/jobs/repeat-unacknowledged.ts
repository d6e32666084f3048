/**
 * Notifications that asked for acknowledgement and got none are sent again at their interval:
 * their push copies become pending again, and the statement tells the live streams.
 */
import type { Job } from "./clock.ts";

export const repeatUnacknowledged: Job = (d) => async () => {
  await d.queue.repeatDue(d.batch, d.ackIntervalScale);
};
