import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  DeliverySummarySchema,
  DeviceDeliverySchema,
  type Notification,
  NotificationSchema,
} from "../../gen/herald/v1/notification_pb.ts";
import type { DeviceDeliveryRow } from "../delivery/store.ts";
import type { NotificationRow } from "../store/notifications.ts";

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

/**
 * The notification's status from its stored one and its deliveries' states: `queued` and
 * `no_devices` are stored; otherwise `delivering` while any delivery is pending, `delivered` when
 * every device got it (sent, delivered or opened), `failed` or `expired` when none did, and
 * `partially_delivered` in between.
 */
export function rollupStatus(stored: string, counts: Record<string, number>): string {
  if (stored === "queued" || stored === "no_devices") return stored;
  const n = (s: string) => counts[s] ?? 0;
  if (n("pending") > 0) return "delivering";
  const ok = n("sent") + n("delivered") + n("opened");
  const bad = n("failed") + n("expired");
  if (bad === 0) return ok > 0 ? "delivered" : stored;
  if (ok === 0) return n("failed") === 0 ? "expired" : "failed";
  return "partially_delivered";
}

/** The API form of a stored notification, with its delivery counts and per-device entries. */
export function notificationToProto(
  row: NotificationRow,
  counts: Record<string, number> = {},
  perDevice: readonly DeviceDeliveryRow[] = [],
): Notification {
  const n = (s: string) => counts[s] ?? 0;
  return create(NotificationSchema, {
    id: row.id,
    projectId: row.project_id,
    topic: row.topic,
    title: row.title,
    message: row.message,
    priority: row.priority,
    clickUrl: row.click_url ?? undefined,
    metadata: (row.metadata as JsonObject | null) ?? undefined,
    ttlSeconds: row.ttl_seconds ?? undefined,
    status: rollupStatus(row.status, counts),
    createdAt: timestampFromDate(row.created_at),
    expiresAt: row.expires_at ? timestampFromDate(row.expires_at) : undefined,
    deliveries: create(DeliverySummarySchema, {
      total: Object.values(counts).reduce((a, b) => a + b, 0),
      pending: n("pending"),
      sent: n("sent"),
      delivered: n("delivered") + n("opened"),
      failed: n("failed"),
      expired: n("expired"),
    }),
    deviceDeliveries: perDevice.map((d) =>
      create(DeviceDeliverySchema, {
        deviceId: d.device_id,
        deviceName: d.device_name,
        platform: d.platform,
        state: d.state,
        attempts: d.attempts,
        lastError: d.last_error,
        sentAt: ts(d.sent_at),
        deliveredAt: ts(d.delivered_at),
        openedAt: ts(d.opened_at),
        updatedAt: ts(d.updated_at),
      }),
    ),
  });
}
