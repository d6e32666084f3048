/**
 * InboxService: the device side of delivery. A `stream` device subscribes and receives every
 * notification fanned out to it, live, with keepalives and a `since` catch-up; any device
 * fetches the full notification, acknowledges it and reports it opened.
 */
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type InboxService,
  type SubscribeResponse,
  SubscribeResponseSchema,
} from "../../gen/herald/v1/inbox_service_pb.ts";
import type { DeliveryQueue } from "../db/queue/delivery-queue.ts";
import type { DeliveryRepository } from "../db/repositories/deliveries.ts";
import type { DeviceRepository } from "../db/repositories/devices.ts";
import type { NotificationRepository } from "../db/repositories/notifications.ts";
import type { StreamHub } from "../delivery/stream-hub.ts";
import { heraldError } from "../errors.ts";
import { notificationToProto } from "./mappers.ts";
import { principalOf } from "./scope.ts";

export interface InboxDeps {
  deliveries: DeliveryRepository;
  queue: DeliveryQueue;
  devices: DeviceRepository;
  notifications: NotificationRepository;
  hub: StreamHub;
  /** At most this long between two messages of a stream (≤ 30 s). */
  keepaliveMs: number;
}

/**
 * Waits until `wake` is called, the call ends, or `ms` pass (then `timedOut` is true: time for a
 * keepalive).
 */
function waitForNews(ms: number, signal: AbortSignal) {
  let wake = () => {};
  const timedOut = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    wake = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(false);
    };
  });
  return { timedOut, wake };
}

const shuttingDown = () =>
  heraldError("unavailable", "the server is shutting down; reconnect", {
    retryAfterSeconds: 1,
    metadata: { "retry-after": "1" },
  });

const keepalive = (): SubscribeResponse =>
  create(SubscribeResponseSchema, { event: { case: "keepalive", value: timestampNow() } });

export function createInboxService(deps: InboxDeps): ServiceImpl<typeof InboxService> {
  const { deliveries, queue, devices, notifications, hub, keepaliveMs } = deps;

  const mine = async (deviceId: string, id: string) => {
    if (!(await deliveries.isFor(deviceId, id))) {
      throw heraldError("not_found", `notification ${id} not found for this device`);
    }
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

  return {
    async *subscribe(req, ctx) {
      const device = await streamDevice(ctx, req.since);
      // Register before catching up so nothing published meanwhile is missed.
      const pending: string[] = [];
      let wake: (() => void) | undefined;
      const unsubscribe = hub.subscribe(device.id, (ids) => {
        pending.push(...ids);
        wake?.();
      });
      const sent = new Set<string>();
      // The call ends when the client goes or the server begins to shut down.
      const ended = AbortSignal.any([ctx.signal, hub.ending]);
      try {
        // With `since`, everything newer not acknowledged; without, what was never handed to
        // this device (published while it was away, even before it ever saw one).
        pending.push(
          ...(req.since
            ? await queue.streamBacklog(device.id, { since: req.since })
            : await queue.pendingStream(device.id, 0)),
        );
        while (!ended.aborted) {
          // Everything that is waiting, at once: one query to load, one to mark, then yield.
          const batch = pending.splice(0, 500).filter((id) => !sent.has(id));
          if (batch.length > 0) {
            // Only catch-up and live can overlap, early on: keep the memory of ids bounded.
            if (sent.size > 10_000) sent.clear();
            for (const id of batch) sent.add(id);
            const rows = await notifications.byIds(batch);
            // Marked `sent` while they are written, not before: no commit stands between a
            // publish and the device. The mark runs to the end even if the stream closes now.
            const marking = queue.markStreamed(device.id, batch);
            marking.catch(() => {});
            for (const row of rows) {
              yield create(SubscribeResponseSchema, {
                event: { case: "notification", value: notificationToProto(row) },
              });
            }
            await marking;
            continue;
          }
          const quiet = waitForNews(keepaliveMs, ended);
          wake = quiet.wake;
          const timedOut = await quiet.timedOut;
          wake = undefined;
          if (timedOut) yield keepalive();
        }
        if (hub.ending.aborted && !ctx.signal.aborted) throw shuttingDown();
      } finally {
        unsubscribe();
      }
    },

    async fetchNotification(req, ctx) {
      const deviceId = principalOf(ctx).credentialId;
      await mine(deviceId, req.id);
      const row = await notifications.byId(req.id);
      if (!row) throw heraldError("not_found", `notification ${req.id} not found`);
      await deliveries.markByDevice(deviceId, req.id, "delivered");
      return { notification: notificationToProto(row) };
    },

    async ackNotification(req, ctx) {
      const deviceId = principalOf(ctx).credentialId;
      await mine(deviceId, req.id);
      await deliveries.markByDevice(deviceId, req.id, "delivered");
      return {};
    },

    async markOpened(req, ctx) {
      const deviceId = principalOf(ctx).credentialId;
      await mine(deviceId, req.id);
      await deliveries.markByDevice(deviceId, req.id, "opened");
      return {};
    },
  };
}
