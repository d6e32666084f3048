/**
 * InboxService: the device side of delivery. A `stream` device subscribes and receives every
 * notification fanned out to it, live, with keepalives and a `since` catch-up; any device
 * fetches the full notification, acknowledges it and reports it opened.
 */
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import type {
  DeliveryQueue,
  DeliveryRepository,
  DeviceRepository,
  DeviceRow,
  NotificationRepository,
  OpenCallRepository,
  ProjectRepository,
} from "../db/index.ts";
import type { StreamHub } from "../delivery/streams/hub.ts";
import { Backlog, filterOf, StreamInbox } from "../delivery/streams/inbox.ts";
import { waitForNews } from "../delivery/streams/wait-for-news.ts";
import { monotonicMs } from "../domain/clock.ts";
import type { Limits } from "../domain/limits.ts";
import type { Log } from "../domain/log.ts";
import type { NotificationRecord } from "../domain/notification.ts";
import { type QuietHours, silenced } from "../domain/quiet-hours.ts";
import { heraldError } from "../errors.ts";
import { deviceQuietHours, notificationToProto } from "./mappers.ts";
import { createConfirmReceipts } from "./receipts.ts";
import { createRespond } from "./responses.ts";
import { principalOf } from "./scope.ts";
import {
  clearedMessage,
  keepaliveOf,
  notificationMessage,
  replacedMessage,
} from "./stream-messages.ts";

export interface InboxDeps {
  deliveries: DeliveryRepository;
  queue: DeliveryQueue;
  devices: DeviceRepository;
  notifications: NotificationRepository;
  projects: ProjectRepository;
  hub: StreamHub;
  /** At most this long between two messages of a stream (≤ 30 s). */
  keepaliveMs: number;
  /** Live streams, counted against the device's and the account's caps in every process. */
  openCalls: OpenCallRepository;
  limits: Pick<Limits, "streamsPerDevice" | "streamsPerAccount">;
  /** Most ids a stream holds for a client that does not read (inbox.ts); the rest is caught up. */
  streamHeldIds: number;
  log: Log;
}

/** How long a device's receipt waits for a late fan-out before answering not_found. */
const fanOutWaitMs = 10_000;

const shuttingDown = () =>
  heraldError("unavailable", "the server is shutting down; reconnect", {
    retryAfterSeconds: 1,
    metadata: { "retry-after": "1" },
  });

export function createInboxService(deps: InboxDeps): ServiceImpl<typeof InboxService> {
  const { deliveries, queue, devices, notifications, projects, hub, keepaliveMs } = deps;
  const keepalive = keepaliveOf(keepaliveMs);
  const openStream = (device: { id: string; accountId: string }) =>
    deps.openCalls.open(
      "stream",
      device.accountId,
      { limit: "streamsPerAccount", value: deps.limits.streamsPerAccount },
      { id: device.id, cap: { limit: "streamsPerDevice", value: deps.limits.streamsPerDevice } },
    );

  /**
   * The notification is this device's. A notification handed over in memory reaches a stream
   * before the fan-out has written its delivery: while one of the device's account is still
   * `queued`, wait for the fan-out rather than answer not_found. Woken by the fan-out's news
   * (from any process), read again each second in case that news was missed (a LISTEN
   * reconnecting), for at most 10 s: a busy server's fan-out may lag, and a receipt refused
   * would make the device show the notification twice.
   */
  const belongs = async (ctx: HandlerContext, id: string): Promise<boolean> => {
    const { credentialId: deviceId, accountId } = principalOf(ctx);
    if (await deliveries.isFor(deviceId, id)) return true;
    const row = await notifications.byId(id);
    if (row?.status !== "queued") {
      // The fan-out may have committed between the two reads: ask once more.
      if (row && (await deliveries.isFor(deviceId, id))) return true;
    } else if ((await projects.get(accountId, row.project_id)) !== null) {
      const until = monotonicMs() + fanOutWaitMs;
      while (monotonicMs() < until && !ctx.signal.aborted) {
        // Watching before reading, so that news arriving in between is not missed.
        const news = waitForNews(Math.min(1000, until - monotonicMs()), ctx.signal);
        const unwatch = hub.fannedOut.watch(id, news.wake);
        const found = await deliveries.isFor(deviceId, id);
        const timedOut = found ? false : await news.timedOut;
        news.wake();
        unwatch();
        if (found) return true;
        // Its fan-out's news came (or was missed, but it is fanned out): one last look.
        if (!timedOut || (await notifications.byId(id))?.status !== "queued") break;
      }
      if (await deliveries.isFor(deviceId, id)) return true;
    }
    return false;
  };
  const mine = async (ctx: HandlerContext, id: string) => {
    if (await belongs(ctx, id)) return principalOf(ctx).credentialId;
    throw heraldError("not_found", `notification ${id} not found for this device`);
  };

  /** The calling device, when it may subscribe with this `since`. */
  const streamDevice = async (ctx: HandlerContext, since: string) => {
    const p = principalOf(ctx);
    const device = await devices.get(p.accountId, p.credentialId);
    if (!device) throw heraldError("unauthenticated", "this device is signed out");
    if (device.platform !== "stream") {
      throw heraldError("failed_precondition", "only stream devices subscribe; push devices fetch");
    }
    if (since && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(since)) {
      throw heraldError("invalid_argument", "invalid request: since", {
        violations: [{ field: "since", message: "must be a notification id" }],
      });
    }
    return device;
  };

  /**
   * A notification for the stream: after a `replaced` event when it replaces an earlier one,
   * marked quiet during the device's quiet hours.
   */
  async function* messagesOf(row: NotificationRecord, quiet: QuietHours | null) {
    const replaced = await notifications.replacedBy(row);
    if (replaced !== undefined) yield replacedMessage(replaced, row);
    yield notificationMessage(row, silenced(row.priority, quiet, new Date()));
  }

  /**
   * The inbox's next batch of committed ids, written (false when there was none). Marked `sent`
   * while they are written, not before: no commit stands between a publish and the device. The
   * mark runs to the end even if the stream closes now.
   */
  async function* writeCommitted(inbox: StreamInbox, catchingUp: boolean) {
    const { load, mark } = inbox.takeCommitted(catchingUp);
    if (load.length === 0 && mark.length === 0) return false;
    const rows = await notifications.byIds(load);
    const marking = queue.markStreamed(inbox.deviceId, [...mark, ...load]);
    marking.catch(() => {});
    for (const row of rows) yield* messagesOf(row, inbox.quiet);
    await marking;
    return true;
  }

  const fellBehind = (deviceId: string) =>
    deps.log.info(
      { device_id: deviceId, held: deps.streamHeldIds },
      "a stream's client read nothing while more came than it holds: caught up from the database",
    );

  /** Waits for news for the inbox; true when none came within the keepalive interval. */
  const quietFor = async (inbox: StreamInbox, ended: AbortSignal) => {
    const quiet = waitForNews(keepaliveMs, ended);
    inbox.wake = quiet.wake;
    const timedOut = await quiet.timedOut;
    inbox.wake = undefined;
    return timedOut;
  };

  /** Acknowledged somewhere: cleared. Awaiting acknowledgement: shown again. */
  async function* writeClearsAndRepeats(inbox: StreamInbox) {
    const cleared = inbox.takeCleared();
    for (const c of cleared) yield clearedMessage(c.id, c.by);
    const repeats = inbox.takeRepeats();
    for (const row of await notifications.byIds(repeats)) yield notificationMessage(row);
    return cleared.length > 0 || repeats.length > 0;
  }

  /** The stream's inbox, told by the hub of what reaches the device. */
  const register = (device: DeviceRow, inbox: StreamInbox) =>
    hub.subscribe({
      deviceId: device.id,
      filter: filterOf(device),
      // A changed device: its topics, its quiet hours, or signed out (its stream ends).
      reload: async () => {
        const now = await devices.get(device.accountId, device.id);
        inbox.quiet = deviceQuietHours(now);
        inbox.signedOut = !now;
        inbox.wake?.();
        return filterOf(now);
      },
      onIds: (ids) => inbox.committed(ids),
      onRow: (row) => inbox.handed(row),
      onRepeat: (ids) => inbox.repeated(ids),
      onCleared: (id, by) => inbox.cleared(id, by),
    });

  return {
    async *subscribe(req, ctx) {
      const device = await streamDevice(ctx, req.since);
      // `since` is the last notification the client received: its receipt, as AckNotification
      // records it. A client whose acknowledgement was lost (the connection broke, or a rate
      // limit refused it) would otherwise leave it `sent` for good: the catch-up skips `since`.
      if (req.since) await deliveries.markByDevice(device.id, req.since, "delivered");
      const call = await openStream(device);
      const inbox = new StreamInbox(device.id, deps.streamHeldIds);
      inbox.quiet = deviceQuietHours(device);
      // Register before catching up so nothing published meanwhile is missed.
      const unsubscribe = register(device, inbox);
      // The call ends when the client goes or the server begins to shut down.
      const ended = AbortSignal.any([ctx.signal, hub.ending]);
      try {
        // At once, so that a client knows the stream is open (a reconnect says so now, not at the
        // first notification or keepalive).
        yield keepalive();
        // Everything not acknowledged but `since` itself: what was published while it was
        // away, what was written to an earlier stream that broke before the client confirmed
        // it, and what was fanned out late; a page at a time, each once the last is written.
        // Until it has caught up once, also what another client of the device confirmed after
        // `since` (stream-backlog.ts): a catch-up for falling behind later sends only the rest.
        const since = req.since || undefined;
        let replay = true;
        const read = (after?: string) => queue.streamBacklog(device.id, { since, after, replay });
        const catchUp = async () => {
          const pages = new Backlog(read);
          inbox.behind(await pages.next());
          return pages;
        };
        let backlog = await catchUp();
        // A stream is in order: what arrives live while it catches up waits for the catch-up.
        let catchingUp = true;
        while (!ended.aborted) {
          if (inbox.signedOut) throw heraldError("unauthenticated", "this device is signed out");
          call.touch();
          // More came than it held while the client did not read: caught up from the database.
          if (inbox.takeOverflow()) {
            fellBehind(device.id);
            backlog = await catchUp();
            catchingUp = true;
            continue;
          }
          // Handed over in memory: sent at once; marked when the fan-out's news comes.
          const handed = catchingUp ? [] : inbox.takeHanded();
          for (const row of handed) yield* messagesOf(row, inbox.quiet);
          if (handed.length > 0) continue;
          if (yield* writeClearsAndRepeats(inbox)) continue;
          if (yield* writeCommitted(inbox, catchingUp)) continue;
          if (backlog.more) {
            inbox.behind(await backlog.next());
            continue;
          }
          if (catchingUp) {
            [catchingUp, replay] = [false, false];
            continue;
          }
          if (await quietFor(inbox, ended)) yield keepalive();
        }
        if (hub.ending.aborted && !ctx.signal.aborted) throw shuttingDown();
      } finally {
        unsubscribe();
        await call.close();
      }
    },

    async fetchNotification(req, ctx) {
      const deviceId = await mine(ctx, req.id);
      const row = await notifications.byId(req.id);
      if (!row) throw heraldError("not_found", `notification ${req.id} not found`);
      await deliveries.markByDevice(deviceId, req.id, "delivered");
      return { notification: notificationToProto(row) };
    },

    async ackNotification(req, ctx) {
      const deviceId = await mine(ctx, req.id);
      await deliveries.markByDevice(deviceId, req.id, "delivered");
      // The person's acknowledgement: the first one stops repeats and clears the others (its
      // statement tells every stream).
      if (req.acknowledge) await queue.acknowledge(req.id, deviceId);
      return {};
    },

    confirmReceipts: createConfirmReceipts({ deliveries, belongs }),

    respondToNotification: createRespond({
      notifications,
      queue,
      mine,
      answered: async (id, by) => {
        await deliveries.markByDevice(by, id, "delivered");
      },
    }),

    async markOpened(req, ctx) {
      const deviceId = await mine(ctx, req.id);
      await deliveries.markByDevice(deviceId, req.id, "opened");
      return {};
    },
  };
}
