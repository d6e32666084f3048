/**
 * The delivery worker of one server process: fans out queued notifications (those their
 * publish's commit did not: group-commit.ts), then sends due pushes through the platform's
 * sender and records each outcome. Several processes may run workers on one database: claims
 * use FOR UPDATE SKIP LOCKED and leases, so each delivery is worked by one worker at a time, and
 * a lease left by a dead worker expires after the lease (HERALD_DELIVERY_LEASE_SECONDS, 30 s).
 *
 * Sends are not awaited by the round that claimed them: a slow push service (or one device's
 * slow endpoint) must not hold up the fan-out of the next notification, live streams, or pushes
 * to other services. At most `maxInFlight` sends are outstanding; when that many are, the worker
 * claims no more until one finishes. Nor does a round wait for its sends to start: the next
 * round's statements run while they do (`#startSends`).
 */
import type { WorkerClock } from "../config.ts";
import type { DeliveryQueue, DeviceRepository, DueDelivery, Outcome } from "../db/index.ts";
import { monotonicMs } from "../domain/clock.ts";
import type { Log } from "../domain/log.ts";
import type { PushTokenKeyRing } from "../domain/push-token-crypto.ts";
import { deliver, type SendDeps } from "./deliver.ts";
import { JobClock } from "./jobs/clock.ts";
import { OutageLog } from "./outage-log.ts";
import { OutcomeWriter } from "./outcome-writer.ts";
import type { Sender } from "./senders/sender.ts";
import { warnIfSlow } from "./slow-round.ts";
import { StatisticsRefresh } from "./statistics-refresh.ts";
import { ThrottledLog } from "./throttled-log.ts";

export interface WorkerOptions {
  queue: DeliveryQueue;
  devices: DeviceRepository;
  /** Opens the sealed push tokens that come with each claim. */
  tokenKeys: PushTokenKeyRing;
  senders: ReadonlyMap<string, Sender>;
  log: Log;
  batch?: number;
  /** Deliveries one fan-out statement writes at most (a bigger fan-out takes several). */
  fanOutChunk?: number;
  /** Sends outstanding at once, across all platforms; and of those, at most this many per account. */
  maxInFlight?: number;
  perAccount?: number;
  /**
   * A send not answered in this time counts as a retryable failure (keep it well under the claim
   * lease, so that no other worker claims a delivery whose send is still outstanding here).
   */
  sendTimeoutMs?: number;
  /** Multiplies acknowledgement intervals (tests shrink it). */
  ackIntervalScale: number;
  /** How often each periodic job runs (config.ts). */
  clock: WorkerClock;
  /** For metrics: each claim's time (s), settle's outcomes, send's outcome and time (s). */
  onClaim?: (seconds: number) => void;
  onSettle?: (outcomes: number) => void;
  onOutcome?: (platform: string, outcome: "sent" | "retry" | "failed" | "expired") => void;
  onSent?: (platform: string, seconds: number) => void;
}

export class DeliveryWorker {
  readonly #o: Required<WorkerOptions>;
  #running: Promise<void> | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  #woken = false;
  /** The loop's idle poll ran out (nothing woke it): the round asks the probe first. */
  #idleRound = false;
  readonly #clock: JobClock;
  #lastClaim = Number.NEGATIVE_INFINITY;
  #lastClaimEmpty = false;
  readonly #statistics: StatisticsRefresh;
  /** An account's sends in flight fell to half its share: claim for it again now. */
  #roomFreed = false;
  /** Pushes were made outside this worker's fan-out (wake): claim in the next round. */
  #pushesDue = false;
  /**
   * A publish of this process may have queued a notification for the fan-out, or the last
   * fan-out left some: a round without a probe looks. Another process's are seen by the probe.
   */
  #mayBeQueued = true;
  readonly #inFlight = new Set<Promise<void>>();
  /** Claimed deliveries whose sends are being started, and how many are left (`#startSends`). */
  #starting: Promise<void> = Promise.resolve();
  #unstarted = 0;
  /** Sends in flight per account (the claim gives an account no more than its share). */
  readonly #busy = new Map<string, number>();
  readonly #outcomes: OutcomeWriter;
  readonly #outage: OutageLog;
  /** What each send needs (deliver.ts): the options, and the configuration errors' log. */
  readonly #sendDeps: SendDeps;

  constructor(opts: WorkerOptions) {
    this.#o = {
      batch: 500,
      fanOutChunk: 1000,
      maxInFlight: 2000,
      perAccount: 400,
      sendTimeoutMs: 10_000,
      onOutcome: () => {},
      onSent: () => {},
      onClaim: () => {},
      onSettle: () => {},
      ...opts,
    };
    this.#clock = new JobClock(this.#o.clock, this.#o);
    this.#outage = new OutageLog(this.#o.log, "the delivery worker");
    this.#sendDeps = { ...this.#o, configurationLog: new ThrottledLog(this.#o.log) };
    this.#outcomes = new OutcomeWriter(this.#o.queue, this.#o.onSettle);
    this.#statistics = new StatisticsRefresh(() => this.#o.queue.analyze(), this.#o.log);
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /**
   * Work was committed: look for it now. `pushesDue`: push deliveries were made outside this
   * worker's fan-out (a publish's commit, a test notification); the round claims them.
   */
  wake(pushesDue = false): void {
    if (pushesDue) [this.#pushesDue, this.#mayBeQueued] = [true, true];
    this.#woken = true;
    this.#wake?.();
  }

  /**
   * Stops claiming, and waits for the sends under way to be recorded. A send can take no longer
   * than the send timeout, so neither can this; what is then left unrecorded keeps its lease and
   * is sent again by a worker after the lease ends (with the same collapse id).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
    await this.#starting;
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      let busy = false;
      try {
        busy = await this.#tick();
        this.#outage.succeeded();
      } catch (err) {
        this.#outage.failed(err, "delivery worker tick failed");
      }
      if (busy || this.#stopped) continue;
      if (this.#woken) {
        this.#woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#idleRound = true;
          resolve();
        }, this.#o.clock.idlePoll);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
      this.#woken = false;
    }
  }

  /** One round of work; true when there may be more right away. */
  async #tick(): Promise<boolean> {
    const t0 = performance.now();
    // A round after an idle poll ran out, or whose probed jobs are due, first asks which
    // statements have work (db/deliveries/due-probe.ts), and runs only those.
    const idle = this.#idleRound;
    this.#idleRound = false;
    const work =
      idle || this.#clock.probedDue(monotonicMs()) ? await this.#o.queue.probeDue() : undefined;
    // The periodic jobs first: what they release is fanned out in this same round.
    await this.#clock.runDue(monotonicMs(), work);
    const tJobs = performance.now();
    const { batch, fanOutChunk } = this.#o;
    // Fan out when the probe saw queued work (released and escalated notifications are queued
    // for this fan-out too); without a probe, when this process's publishes queued some since
    // the last look, or that look left some.
    const queued = work ? work.queued || work.scheduled || work.escalations : this.#mayBeQueued;
    if (queued) this.#mayBeQueued = false;
    const {
      ids: fanned,
      pushes,
      more,
    } = queued
      ? await this.#o.queue.fanOut(batch, fanOutChunk)
      : { ids: [], pushes: 0, more: false };
    if (more || fanned.length === batch) this.#mayBeQueued = true;
    this.#statistics.fannedOut(pushes);
    const t1 = performance.now();
    // Pushes come due from a fan-out just done, or from retries and repeats (of any process),
    // looked for at most every `claimRetries` ms. A full set of sends in flight claims nothing;
    // the first one to finish wakes the loop.
    const now = monotonicMs();
    const room = Math.min(batch, this.#o.maxInFlight - this.#inFlight.size - this.#unstarted);
    const retries =
      now - this.#lastClaim >= this.#o.clock.claimRetries && (!work || work.pushes || work.repeats);
    const claim =
      room > 0 &&
      (pushes > 0 || this.#pushesDue || this.#roomFreed || !this.#lastClaimEmpty || retries);
    if (claim) [this.#roomFreed, this.#pushesDue] = [false, false];
    const share = { perAccount: this.#o.perAccount, busy: this.#busy };
    const due = claim ? await this.#o.queue.claimDue(room, share) : [];
    if (claim) {
      this.#lastClaim = now;
      this.#lastClaimEmpty = due.length === 0;
    }
    const t3 = performance.now();
    if (claim) this.#o.onClaim((t3 - t1) / 1000);
    // The previous round's sends were started while this round's statements ran: then these.
    await this.#starting;
    const t4 = performance.now();
    this.#starting = this.#startSends(due);
    warnIfSlow(
      this.#o.log,
      { start: t0, jobs: tJobs, fanOut: t1, claim: t3, sendsStarted: t4 },
      { fannedOut: fanned.length, claimed: due.length, inFlight: this.#inFlight.size },
    );
    // A claim that found work may have been cut by an account's share rather than the batch:
    // claim again at once (an empty claim then ends the burst), not after an idle poll.
    return more || fanned.length === batch || (claim && due.length > 0);
  }

  #settle(delivery: DueDelivery, outcome: Outcome): Promise<void> {
    this.#o.onOutcome(delivery.platform, outcome.state === "pending" ? "retry" : outcome.state);
    return this.#outcomes.write(delivery, outcome);
  }

  /**
   * Starts the claimed deliveries' sends. They count against their accounts' shares at once (a
   * claim running meanwhile sees them); starting one costs CPU before its first byte leaves (Web
   * Push encrypts each message), so the loop yields every few: the first requests are on the
   * wire while the rest are prepared, and the next round's statements proceed.
   */
  async #startSends(due: DueDelivery[]): Promise<void> {
    for (const d of due) this.#busy.set(d.account_id, (this.#busy.get(d.account_id) ?? 0) + 1);
    this.#unstarted = due.length;
    for (let i = 0; i < due.length; i++) {
      const d = due[i] as DueDelivery;
      this.#unstarted -= 1;
      this.#track(d.account_id, (release) =>
        deliver(d, release, (outcome) => this.#settle(d, outcome), this.#sendDeps),
      );
      if (i % 25 === 24) await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Runs one delivery, counted against its account's share (from `#startSends`) until `release`
   * (its push service answered) and in the in-flight set until its outcome is recorded.
   */
  #track(account: string, run: (release: () => void) => Promise<void>): void {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.#busy.get(account) ?? 1) - 1;
      if (left > 0) this.#busy.set(account, left);
      else this.#busy.delete(account);
      // Room for more: look for due pushes now rather than at the next idle poll, when an
      // account at its share has sent half of it (a fan-out to more devices than the share is
      // claimed in halves, not a share per idle poll).
      if (left === Math.floor(this.#o.perAccount / 2)) {
        this.#roomFreed = true;
        this.wake();
      }
    };
    const p = run(release)
      .catch((err: unknown) => this.#o.log.error({ err }, "recording a delivery failed"))
      .finally(() => {
        release();
        this.#inFlight.delete(p);
        // The worker was full: room for more.
        if (this.#inFlight.size === this.#o.maxInFlight - 1) this.wake();
      });
    this.#inFlight.add(p);
  }
}
