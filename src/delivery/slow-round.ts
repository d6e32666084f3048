/** The delivery worker's warning about a round that took over a second, with its phases. */
import type { Log } from "../domain/log.ts";

/** When each phase of a round ended, from its start (ms, performance.now()). */
export interface RoundMarks {
  start: number;
  jobs: number;
  fanOut: number;
  claim: number;
  /** The previous round's sends all started (the round waits for that before starting its own). */
  sendsStarted: number;
}

export function warnIfSlow(
  log: Log,
  marks: RoundMarks,
  counts: { fannedOut: number; claimed: number; inFlight: number },
): void {
  if (marks.sendsStarted - marks.start <= 1_000) return;
  const ms = (a: number, b: number) => Math.round(b - a);
  log.warn(
    {
      fanned_out: counts.fannedOut,
      claimed: counts.claimed,
      in_flight: counts.inFlight,
      jobs_ms: ms(marks.start, marks.jobs),
      fan_out_ms: ms(marks.jobs, marks.fanOut),
      claim_ms: ms(marks.fanOut, marks.claim),
      start_sends_ms: ms(marks.claim, marks.sendsStarted),
    },
    "slow delivery round",
  );
}
