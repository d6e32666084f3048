/**
 * Clears for the other push devices of an acknowledged, answered or withdrawn notification:
 * taken from their table, sent in the background (a slow push service must not hold the round),
 * best effort (delivery/clears.ts).
 */
import { sendClears as send } from "../clears.ts";
import type { Job } from "./clock.ts";

/** Clears taken per run: each is one push. */
const clearsPerRun = 100;

export const sendClears: Job = (d) => async () => {
  const clears = await d.queue.claimClears(clearsPerRun);
  if (clears.length === 0) return;
  void send(clears, d.senders, d.tokenKeys, d.log).catch((err: unknown) =>
    d.log.error({ err }, "clearing acknowledged notifications failed"),
  );
};
