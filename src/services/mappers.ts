/**
 * The one home of row → API mappings: accounts, projects, credentials, devices and
 * notifications. Secrets never pass through here.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Account, AccountSchema } from "../../gen/herald/v1/account_pb.ts";
import {
  type ApiKey,
  ApiKeySchema,
  type CliToken,
  CliTokenSchema,
} from "../../gen/herald/v1/credential_pb.ts";
import { type Device, DeviceSchema } from "../../gen/herald/v1/device_pb.ts";
import {
  ActionSchema,
  DeliverySummarySchema,
  DeviceDeliverySchema,
  type Notification,
  NotificationSchema,
  type Response,
  ResponseSchema,
} from "../../gen/herald/v1/notification_pb.ts";
import { type Project, ProjectSchema } from "../../gen/herald/v1/project_pb.ts";
import type {
  AccountRow,
  ApiKeyRow,
  CliTokenRow,
  DeviceDeliveryRow,
  DeviceRow,
  ProjectRow,
} from "../db/index.ts";
import { apiContentOf, type NotificationRecord } from "../domain/notification.ts";
import { rollupStatus } from "../domain/notification-status.ts";
import { clockOf, type QuietHours, quietHoursOf } from "../domain/quiet-hours.ts";

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(new Date(d)) : undefined);

export function accountToProto(a: AccountRow, defaultProjectId: string, isOwner = false): Account {
  return create(AccountSchema, {
    id: a.id,
    email: a.email,
    plan: a.plan,
    defaultProjectId,
    createdAt: ts(a.createdAt),
    isOwner,
  });
}

export function projectToProto(p: ProjectRow): Project {
  return create(ProjectSchema, {
    id: p.id,
    name: p.name,
    isDefault: p.isDefault,
    createdAt: ts(p.createdAt),
    acceptsEscalations: p.acceptsEscalations,
  });
}

export function apiKeyToProto(k: ApiKeyRow): ApiKey {
  return create(ApiKeySchema, {
    id: k.id,
    projectId: k.projectId,
    name: k.name,
    displayPrefix: k.displayPrefix,
    scopes: [...k.scopes],
    createdAt: ts(k.createdAt),
    lastUsedAt: ts(k.lastUsedAt),
    revokedAt: ts(k.revokedAt),
    expiresAt: ts(k.expiresAt),
  });
}

export function cliTokenToProto(t: CliTokenRow, currentId?: string): CliToken {
  return create(CliTokenSchema, {
    id: t.id,
    name: t.name,
    displayPrefix: t.displayPrefix,
    createdAt: ts(t.createdAt),
    lastUsedAt: ts(t.lastUsedAt),
    revokedAt: ts(t.revokedAt),
    expiresAt: ts(t.expiresAt),
    current: t.id === currentId,
    kind: t.kind,
    madeBy: t.madeBy,
  });
}

export function deviceToProto(d: DeviceRow): Device {
  return create(DeviceSchema, {
    id: d.id,
    name: d.name,
    platform: d.platform,
    tokenLast4: d.tokenLast4,
    topics: [...d.topics],
    enabled: d.enabled,
    disabledReason: d.disabledReason,
    createdAt: ts(d.createdAt),
    lastSeenAt: ts(d.lastSeenAt),
    quietHours: quietProto(deviceQuietHours(d)),
  });
}

/** A device row's quiet hours (none: null). */
export function deviceQuietHours(d: DeviceRow | null): QuietHours | null {
  if (d === null) return null;
  return quietHoursOf({
    quiet_tz: d.quietTz ?? null,
    quiet_start: d.quietStart ?? null,
    quiet_end: d.quietEnd ?? null,
  });
}

const quietProto = (q: QuietHours | null) =>
  q ? { timeZone: q.timeZone, start: clockOf(q.start), end: clockOf(q.end) } : undefined;

/** The recorded answer, if one came. */
function responseOf(row: NotificationRecord): Response | undefined {
  if (!row.responded_at || !row.response_action) return undefined;
  return create(ResponseSchema, {
    actionId: row.response_action,
    text: row.response_text ?? "",
    deviceId: row.responded_by ?? "",
    answeredAt: timestampFromDate(row.responded_at),
  });
}

type NotificationInit = MessageInitShape<typeof NotificationSchema>;

/** A stored notification, with its delivery counts and per-device entries when given. */
export function notificationToProto(
  row: NotificationRecord,
  counts: Record<string, number> = {},
  perDevice: readonly DeviceDeliveryRow[] = [],
): Notification {
  const n = (s: string) => counts[s] ?? 0;
  return create(NotificationSchema, {
    ...(apiContentOf(row) as NotificationInit),
    id: row.id,
    projectId: row.project_id,
    status: rollupStatus(row.status, counts),
    createdAt: timestampFromDate(row.created_at),
    expiresAt: ts(row.expires_at),
    deliverAt: ts(row.deliver_at),
    requireAck: row.require_ack ?? false,
    repeatEverySeconds: row.repeat_every_seconds ?? undefined,
    escalateAfterSeconds: row.escalate_after_seconds ?? undefined,
    acknowledgedAt: ts(row.acknowledged_at),
    acknowledgedByDeviceId: row.acknowledged_by ?? "",
    repeats: row.repeats ?? 0,
    escalatedAt: ts(row.escalated_at),
    escalationId: row.escalation_id ?? "",
    actions: (row.actions ?? []).map((a) => create(ActionSchema, a)),
    response: responseOf(row),
    deliveries: create(DeliverySummarySchema, {
      total: Object.values(counts).reduce((a, b) => a + b, 0),
      pending: n("pending"),
      sent: n("sent"),
      delivered: n("delivered") + n("opened"),
      failed: n("failed"),
      expired: n("expired"),
      canceled: n("canceled"),
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
