/**
 * Live streams of this process. Every process LISTENs on one channel; a worker's fan-out
 * statement NOTIFYs it for the notifications that reached stream devices, so the news arrives
 * when the fan-out commits (never inside a publish). Each process then hands the new deliveries
 * of the stream devices connected to it to their streams.
 *
 * A publish committed by this process is handed over in memory at once to its streams whose
 * device its fan-out will reach (same account, topic filter admits it); when the fan-out's
 * NOTIFY arrives, those streams only record the delivery as sent. A device's filter is read when
 * it subscribes, whenever the transaction that changes it says so (db/repositories/devices.ts),
 * on a second channel, and when the hub listens again after it could not.
 */
import type { DeliveryQueue } from "../../db/index.ts";
import {
  deliveryChannel,
  deviceChannel,
  feedChannel,
  type InboxNews,
  inboxChannel,
} from "../../db/index.ts";
import type { Log } from "../../domain/log.ts";
import type { NotificationRecord } from "../../domain/notification.ts";
import { namesProjects, topicAdmits } from "../../domain/topic-filter.ts";
import { OutageLog } from "../outage-log.ts";
import { Feeds } from "./feeds.ts";
import { Listener } from "./listener.ts";
import { waitForNews } from "./wait-for-news.ts";
import { Wakers } from "./wakers.ts";

/** Hands a stream notification ids as new deliveries. */
const delivered = (sub: StreamSubscriber, ids: string[]) => sub.onIds(ids);

/** What a stream's device accepts: its account, and its topic filter. */
export interface StreamFilter {
  accountId: string;
  topics: readonly string[];
}

export interface StreamSubscriber {
  deviceId: string;
  /** Ids of new deliveries for this device, committed (from the fan-out or a catch-up). */
  onIds: (notificationIds: string[]) => void;
  /** A notification this process just committed that the device's fan-out will reach. */
  onRow: (row: NotificationRecord) => void;
  /** Notifications it has, sent again while awaiting acknowledgement. */
  onRepeat: (notificationIds: string[]) => void;
  /** A notification it has was acknowledged (here or elsewhere). */
  onCleared: (notificationId: string, byDeviceId: string) => void;
  /** Reads the device's filter again (undefined: signed out, hand it nothing in memory). */
  reload: () => Promise<StreamFilter | undefined>;
  filter: StreamFilter | undefined;
}

export class StreamHub {
  readonly #queue: DeliveryQueue;
  readonly #log: Log;
  readonly #outage: OutageLog; // a database outage's failures, said once
  readonly #subscribers = new Map<string, Set<StreamSubscriber>>();
  readonly #byAccount = new Map<string, Set<StreamSubscriber>>();
  /** Publishers waiting for an answer, by notification id. */
  readonly #waiters = new Wakers();
  readonly #listener: Listener;
  #sweep: NodeJS.Timeout | undefined;
  readonly #ending = new AbortController();
  /** Consoles' live feeds, by project id: woken by the news of the statements that change them. */
  readonly feed: Feeds;
  /** Calls waiting for a notification's fan-out (a device confirming what it got in memory). */
  readonly fannedOut = new Wakers();

  constructor(url: string, queue: DeliveryQueue, log: Log) {
    this.#queue = queue;
    this.#log = log;
    this.#outage = new OutageLog(log, "the stream hub");
    this.#listener = new Listener({
      url,
      channels: [deliveryChannel, deviceChannel, inboxChannel, feedChannel],
      onNotification: (channel, payload) => this.#heard(channel, payload),
      // What it missed meanwhile: changed devices (their filters read again), deliveries, and
      // acknowledgements and answers (their clears).
      onBack: async (awayMs) => {
        await this.#reload([...this.#subscribers.values()].flatMap((set) => [...set]));
        await this.#catchUp(0);
        await this.#clearedWhileAway(awayMs);
      },
      outage: this.#outage,
    });
    this.feed = new Feeds((payload) => this.#listener.notify(feedChannel, payload), log);
  }

  /**
   * LISTENs, and keeps doing so (listener.ts). NOTIFYs sent while it could not are lost, so
   * when it listens again, and every 30 s as a safety net, connected streams are handed
   * whatever is still pending for them.
   */
  async start(): Promise<void> {
    this.#sweep = setInterval(() => void this.#catchUp(5_000), 30_000).unref();
    await this.#listener.start();
  }

  #heard(channel: string, payload: string | undefined): void {
    if (channel === deviceChannel) void this.#reload(this.#subscribers.get(payload ?? "") ?? []);
    else if (channel === inboxChannel) void this.#inbox(payload);
    else if (channel === feedChannel && payload)
      this.feed.wake(payload === "*" ? "*" : payload.split(","));
    else void this.#dispatch(payload);
  }

  /** Hands each connected stream its deliveries still pending for at least `minAgeMs`. */
  async #catchUp(minAgeMs: number): Promise<void> {
    await this.#handEach((deviceId) => this.#queue.pendingStream(deviceId, minAgeMs), delivered);
  }

  /** Live streams connected to this process. */
  get streamCount(): number {
    let n = 0;
    for (const set of this.#subscribers.values()) n += set.size;
    return n;
  }

  /**
   * Aborted when the server begins to shut down: open streams end at once (their clients
   * reconnect, to another process or to this one restarted) instead of holding the shutdown
   * for its whole grace period.
   */
  get ending(): AbortSignal {
    return this.#ending.signal;
  }

  endStreams(): void {
    this.#ending.abort();
  }

  /** Registers a stream of a device; returns how to unregister it. */
  subscribe(sub: StreamSubscriber): () => void {
    const set = this.#subscribers.get(sub.deviceId) ?? new Set();
    set.add(sub);
    this.#subscribers.set(sub.deviceId, set);
    const account = sub.filter?.accountId;
    if (account) {
      const mine = this.#byAccount.get(account) ?? new Set();
      mine.add(sub);
      this.#byAccount.set(account, mine);
    }
    return () => {
      set.delete(sub);
      if (set.size === 0) this.#subscribers.delete(sub.deviceId);
      const mine = account ? this.#byAccount.get(account) : undefined;
      mine?.delete(sub);
      if (account && mine?.size === 0) this.#byAccount.delete(account);
    };
  }

  /**
   * Hands a notification this process just committed to this process's streams that its
   * fan-out will reach. `projectName` is asked only when a filter names projects.
   */
  async handOver(
    row: NotificationRecord,
    accountId: string,
    projectName: () => Promise<string | undefined>,
  ): Promise<void> {
    const subs = this.#byAccount.get(accountId);
    if (!subs) return;
    let project: string | undefined;
    for (const sub of subs) {
      const topics = sub.filter?.topics;
      if (!topics) continue;
      if (namesProjects(topics) && project === undefined) project = (await projectName()) ?? "";
      // As the device will see it after the fan-out: on its way.
      if (topicAdmits(topics, project ?? "", row.topic))
        sub.onRow({ ...row, status: "delivering" });
    }
  }

  /**
   * Resolves when news of the notification comes (from any process: an answer or an
   * acknowledgement), after `ms`, or when `signal` aborts, whichever is first.
   */
  async awaitNews(id: string, ms: number, signal: AbortSignal): Promise<void> {
    const news = waitForNews(ms, signal);
    const unwatch = this.#waiters.watch(id, news.wake);
    await news.timedOut;
    unwatch();
  }

  async #inbox(payload: string | undefined): Promise<void> {
    if (!payload) return;
    const news = JSON.parse(payload) as InboxNews;
    if (news.kind === "cleared") this.#waiters.wake([news.id]);
    if (this.#subscribers.size === 0) return;
    const ids = news.kind === "repeat" ? news.ids : [news.id];
    await this.#handEach(
      (deviceId) => this.#queue.deliveredTo(deviceId, ids),
      (sub, theirs) =>
        news.kind === "repeat" ? sub.onRepeat(theirs) : sub.onCleared(news.id, news.by),
    );
  }

  /**
   * Clears, on each connected stream, what was acknowledged or answered while the hub could not
   * hear it (with 5 s to spare for the moment it stopped hearing). A question its asker withdrew
   * meanwhile is not among them: it keeps no time of it (the client learns at its next subscribe).
   */
  async #clearedWhileAway(awayMs: number): Promise<void> {
    await this.#handEach(
      (deviceId) => this.#queue.clearedSince(deviceId, awayMs + 5_000),
      (sub, cleared) => {
        for (const c of cleared) sub.onCleared(c.id, c.by);
      },
    );
  }

  /** Rereads these streams' device filters. */
  async #reload(subs: Iterable<StreamSubscriber>): Promise<void> {
    for (const sub of subs) {
      try {
        sub.filter = await sub.reload();
      } catch (err) {
        sub.filter = undefined; // the NOTIFY path still serves it
        this.#log.warn({ err, device_id: sub.deviceId }, "reloading a stream's filter failed");
      }
    }
  }

  async #dispatch(payload: string | undefined): Promise<void> {
    if (!payload) return;
    const ids = JSON.parse(payload) as string[];
    this.fannedOut.wake(ids);
    if (this.#subscribers.size === 0) return;
    await this.#handEach((deviceId) => this.#queue.streamBacklog(deviceId, { ids }), delivered);
  }

  /**
   * For each connected device, what `find` finds of it, handed to its streams by `hand`.
   */
  async #handEach<T>(
    find: (deviceId: string) => Promise<T[]>,
    hand: (sub: StreamSubscriber, found: T[]) => void,
  ): Promise<void> {
    for (const [deviceId, subs] of this.#subscribers) {
      try {
        const mine = await find(deviceId);
        if (mine.length > 0) for (const s of subs) hand(s, mine);
      } catch (err) {
        this.#outage.failed(err, "handing deliveries to a stream failed", { device_id: deviceId });
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await this.#listener.close();
  }
}
