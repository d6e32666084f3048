/**
 * Stream copies that outlived their notification's ttl while their device was away are marked
 * expired, so that the device is not sent them when it comes back.
 */
import type { Job } from "./clock.ts";

export const expireStreams: Job = (d) => async () => {
  await d.queue.expireStreamDeliveries();
};
