/**
 * The delivery worker's clock: its periodic jobs, each with a name, a file of its own in this
 * folder, and an interval from config.ts (`workerClock`). The worker asks the clock to run what
 * is due at the start of each round; a job that fails is logged with its name and tried again
 * at its next time, and the others run regardless. A job the worker's probe answers for
 * (db/deliveries/due-probe.ts) runs only when the probe says it has work: the jobs due together
 * cost one read instead of a locking statement each.
 */
import type { WorkerClock } from "../../config.ts";
import type { DeliveryQueue, DueWork } from "../../db/index.ts";
import type { Log } from "../../domain/log.ts";
import type { PushTokenKeyRing } from "../../domain/push-token-crypto.ts";
import { OutageLog } from "../outage-log.ts";
import type { Sender } from "../senders/sender.ts";
import { escalate } from "./escalate.ts";
import { expireStreams } from "./expire-streams.ts";
import { releaseScheduled } from "./release-scheduled.ts";
import { repeatUnacknowledged } from "./repeat-unacknowledged.ts";
import { sendClears } from "./send-clears.ts";

/** What the jobs work with: the worker's own parts. */
export interface JobDeps {
  queue: DeliveryQueue;
  /** Rows one run of a job takes at most. */
  batch: number;
  senders: ReadonlyMap<string, Sender>;
  tokenKeys: PushTokenKeyRing;
  log: Log;
  /** Multiplies acknowledgement intervals (tests shrink it). */
  ackIntervalScale: number;
}

/** A job: one run of it, built from the worker's parts. */
export type Job = (deps: JobDeps) => () => Promise<void>;

/** Every periodic job, by the name its interval has in `WorkerClock`, in the order they run. */
const jobs = {
  releaseScheduled,
  repeatUnacknowledged,
  escalate,
  sendClears,
  expireStreams,
} satisfies Record<string, Job>;

export type JobName = keyof typeof jobs;

/** The probe's answer that says whether a job has work; a job without one runs at its time. */
const workOf: Partial<Record<JobName, keyof DueWork>> = {
  releaseScheduled: "scheduled",
  repeatUnacknowledged: "repeats",
  escalate: "escalations",
  sendClears: "clears",
};

export class JobClock {
  readonly #jobs: { name: JobName; everyMs: number; run: () => Promise<void> }[];
  readonly #last = new Map<JobName, number>();
  readonly #outage: OutageLog;

  constructor(clock: WorkerClock, deps: JobDeps) {
    this.#outage = new OutageLog(deps.log, "the delivery worker's periodic jobs");
    this.#jobs = (Object.keys(jobs) as JobName[]).map((name) => ({
      name,
      everyMs: clock[name],
      run: jobs[name](deps),
    }));
  }

  /** Whether a job the probe answers for is due: then the round asks the probe first. */
  probedDue(now: number): boolean {
    return this.#jobs.some((job) => workOf[job.name] && this.#isDue(job, now));
  }

  /**
   * Runs each job whose interval has passed since its last run, but not one the probe's answer
   * (`work`, when the round asked it) says has nothing to do.
   */
  async runDue(now: number, work?: DueWork): Promise<void> {
    for (const job of this.#jobs) {
      if (!this.#isDue(job, now)) continue;
      this.#last.set(job.name, now);
      const answer = workOf[job.name];
      if (work && answer && !work[answer]) continue;
      try {
        await job.run();
        this.#outage.succeeded();
      } catch (err) {
        this.#outage.failed(err, "a periodic delivery job failed", { job: job.name });
      }
    }
  }

  #isDue(job: { name: JobName; everyMs: number }, now: number): boolean {
    return now - (this.#last.get(job.name) ?? Number.NEGATIVE_INFINITY) >= job.everyMs;
  }
}
