/**
 * The delivery worker of one server process: fans out queued notifications, then sends due
 * pushes through the platform's sender and records each outcome. Several processes may run
 * workers on one database: claims use FOR UPDATE SKIP LOCKED and leases, so each delivery is
 * worked by one worker at a time, and a lease left by a dead worker expires after 30 s.
 */
import type { FastifyBaseLogger } from "fastify";
import { backoffMs, deadline } from "../domain/retry.ts";
import type { DeviceStore } from "../store/devices.ts";
import type { PushMessage, Sender, SendResult } from "./senders/sender.ts";
import type { DeliveryStore, DueDelivery } from "./store.ts";

export interface WorkerOptions {
  store: DeliveryStore;
  devices: DeviceStore;
  senders: ReadonlyMap<string, Sender>;
  log: FastifyBaseLogger;
  /** Called after a fan-out commits, with the notification ids (to wake live streams). */
  onFannedOut: (ids: string[]) => Promise<void>;
  /** Sleep between idle polls; a publish in this process wakes the worker at once. */
  idleMs?: number;
  batch?: number;
}

export class DeliveryWorker {
  readonly #o: Required<WorkerOptions>;
  #running: Promise<void> | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  #woken = false;
  #lastSweep = 0;
  #lastClaim = 0;
  #lastClaimEmpty = false;

  constructor(opts: WorkerOptions) {
    this.#o = { idleMs: 250, batch: 500, ...opts };
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Something was published: look for work now. */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      let busy = false;
      try {
        busy = await this.tick();
      } catch (err) {
        this.#o.log.error({ err }, "delivery worker tick failed");
      }
      if (busy || this.#stopped) continue;
      if (this.#woken) {
        this.#woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#o.idleMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
      this.#woken = false;
    }
  }

  /** One round of work; true when there may be more right away. Exposed for tests. */
  async tick(): Promise<boolean> {
    const t0 = performance.now();
    const { ids: fanned, pushes } = await this.#o.store.fanOut(this.#o.batch);
    const t1 = performance.now();
    if (fanned.length > 0) {
      // Waking live streams must never hold up pushes: a failure here is logged, not thrown.
      await this.#o.onFannedOut(fanned).catch((err: unknown) => {
        this.#o.log.error({ err }, "announcing fanned-out notifications failed");
      });
    }
    const t2 = performance.now();
    // Pushes come due from a fan-out just done, or from retries (of any process): the latter are
    // looked for at most every 100 ms, so a publish without push devices costs one statement.
    const now = Date.now();
    const claim = pushes > 0 || !this.#lastClaimEmpty || now - this.#lastClaim >= 100;
    const due = claim ? await this.#o.store.claimDue(this.#o.batch) : [];
    if (claim) {
      this.#lastClaim = now;
      this.#lastClaimEmpty = due.length === 0;
    }
    const t3 = performance.now();
    await Promise.all(due.map((d) => this.#deliver(d)));
    const t4 = performance.now();
    if (Date.now() - this.#lastSweep > 5_000) {
      this.#lastSweep = Date.now();
      await this.#o.store.expireStreamDeliveries();
    }
    const t5 = performance.now();
    if (t5 - t0 > 1_000) {
      const ms = (a: number, b: number) => Math.round(b - a);
      this.#o.log.warn(
        {
          fanned_out: fanned.length,
          claimed: due.length,
          fan_out_ms: ms(t0, t1),
          announce_ms: ms(t1, t2),
          claim_ms: ms(t2, t3),
          send_ms: ms(t3, t4),
          sweep_ms: ms(t4, t5),
        },
        "slow delivery round",
      );
    }
    return fanned.length === this.#o.batch || due.length === this.#o.batch;
  }

  async #deliver(d: DueDelivery): Promise<void> {
    const { store, devices, senders, log } = this.#o;
    const until = deadline(d.created_at, d.expires_at);
    const giveUp = (why: string) =>
      d.expires_at
        ? store.settle(d, { state: "expired", error: `ttl passed: ${why}` })
        : store.settle(d, { state: "failed", error: `gave up after 24 hours: ${why}` });
    if (Date.now() >= until.getTime()) return giveUp("not sent in time");
    const sender = senders.get(d.platform);
    const token = await devices.pushToken(d.device_id);
    if (!sender || !token) {
      return store.settle(d, { state: "failed", error: `no push channel for ${d.platform}` });
    }
    const message: PushMessage = {
      notificationId: d.notification_id,
      topic: d.topic,
      title: d.title,
      message: d.message,
      priority: d.priority,
      clickUrl: d.click_url,
      expiresAt: until,
      hasTtl: d.expires_at !== null,
    };
    const result: SendResult = await sender.send(message, token).catch((err: unknown) => {
      log.warn({ err, platform: d.platform }, "sender threw");
      return { kind: "retry", reason: "sender error" };
    });
    switch (result.kind) {
      case "ok":
        return store.settle(d, { state: "sent" });
      case "dead_token":
        await store.disableDevice(d.device_id, result.reason);
        return store.settle(d, { state: "failed", error: result.reason });
      case "permanent":
        return store.settle(d, { state: "failed", error: result.reason });
      case "retry": {
        const next = new Date(Date.now() + backoffMs(d.attempts, result.retryAfterMs));
        if (next >= until) return giveUp(result.reason);
        return store.settle(d, { state: "pending", error: result.reason, nextAttemptAt: next });
      }
    }
  }
}
