/**
 * The notification's one home: its record, and the defaults of a publish, filled in once for
 * the row it becomes and for the idempotency fingerprint that recognises it again.
 */
import { createHash } from "node:crypto";
import type { NotifyRequest } from "../../gen/herald/v1/notify_service_pb.ts";
import { ackSchedule, defaultRepeatSeconds } from "./acknowledgement.ts";
import { type StoredAction, storedActions } from "./actions.ts";
import { uuidv7 } from "./ids.ts";
import { deliverAtOf } from "./schedule.ts";

/**
 * A notification: the one record of what it says and how it is delivered, as stored (one row
 * of `notification`; the persistence wing's codec, db/notifications/codec.ts, maps its columns).
 */
export interface NotificationRecord {
  id: string;
  project_id: string;
  topic: string;
  title: string;
  message: string;
  priority: string;
  click_url: string | null;
  metadata: Record<string, unknown> | null;
  ttl_seconds: number | null;
  status: string;
  created_at: Date;
  expires_at: Date | null;
  /** When a scheduled notification is to be fanned out (status `scheduled` until then). */
  deliver_at: Date | null;
  /** Acknowledgement asked for: repeats and escalation until a device acknowledges it. */
  require_ack: boolean;
  repeat_every_seconds: number | null;
  escalate_after_seconds: number | null;
  escalate_topic: string | null;
  escalate_project_id: string | null;
  next_repeat_at: Date | null;
  escalate_at: Date | null;
  /** Set later, by the repeats, the acknowledgement and the escalation. */
  repeats?: number;
  acknowledged_at?: Date | null;
  acknowledged_by?: string | null;
  escalated_at?: Date | null;
  escalation_id?: string | null;
  /** Buttons the person may answer with; null when none. */
  actions: StoredAction[] | null;
  /** The first answer, set later. */
  responded_at?: Date | null;
  responded_by?: string | null;
  response_action?: string | null;
  response_text?: string | null;
  /** A later notification of the project with the same key replaces this one on devices. */
  replace_key: string | null;
}

/** What a device shows of a notification: a push carries these, and a sender reads them. */
export const shownFields = [
  "topic",
  "title",
  "message",
  "priority",
  "click_url",
  "replace_key",
] as const;
export type Shown = Pick<NotificationRecord, (typeof shownFields)[number]>;

/** A push that shows nothing (a clear): every shown field empty. */
export const nothingShown: Shown = {
  topic: "",
  title: "",
  message: "",
  priority: "low",
  click_url: null,
  replace_key: null,
};

/** What a publisher wrote and every reader gets back as written (contentOf fills them). */
export const contentFields = [...shownFields, "metadata", "ttl_seconds"] as const;
export type Content = Pick<NotificationRecord, (typeof contentFields)[number]>;

/** The shown fields of a row (of the record's columns, or more). */
export function shownOf(row: Shown): Shown {
  return Object.fromEntries(shownFields.map((f) => [f, row[f]])) as unknown as Shown;
}

/**
 * The tag under which devices show a notification with a replace key, in place of the earlier
 * one with the same key: one per project and key (two projects of an account never replace each
 * other's), 32 characters of the URL-safe alphabet, as APNs' collapse id, FCM's collapse key and
 * Android tag, and Web Push's Topic all take.
 */
export function replaceTagOf(projectId: string, replaceKey: string): string {
  const digest = createHash("sha256").update(`${projectId}/${replaceKey}`).digest("base64url");
  return `r${digest.slice(0, 31)}`;
}

/** snake_case to the API's camelCase: `click_url` → `clickUrl`. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * A notification's content under the API's names, absent where not set: what an API message
 * of it carries as written (a field added to the content reaches every reader from here).
 */
export function apiContentOf(row: Content): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, name] of apiNames) if (row[field] !== null) out[name] = row[field];
  return out;
}

/** Each content field with its API name, worked out once (the mapping runs on every answer). */
const apiNames = contentFields.map((f) => [f, camelCase(f)] as const);

/** What a notification says, defaults filled in: topic `default`, priority `normal`. */
export function contentOf(req: NotifyRequest): Content {
  return {
    topic: req.topic || "default",
    title: req.title,
    message: req.message,
    priority: req.priority || "normal",
    click_url: req.clickUrl ?? null,
    metadata: req.metadata ?? null,
    ttl_seconds: req.ttlSeconds ?? null,
    replace_key: req.replaceKey ?? null,
  };
}

/**
 * The record a publish inserts: every default filled in once (topic, priority, the ttl's
 * expiry, the acknowledgement's repeats and escalation, the stored actions), `queued` for the
 * fan-out or `scheduled`.
 */
export function recordOf(
  req: NotifyRequest,
  projectId: string,
  now: Date,
  ack: { escalateProjectId: string | null; scale: number },
): NotificationRecord {
  const deliverAt = deliverAtOf(req, now);
  // A ttl counts from the delivery time, and so do repeats and the escalation.
  const from = (deliverAt ?? now).getTime();
  const { nextRepeatAt, escalateAt } = ackSchedule(req, new Date(from), ack.scale);
  return {
    id: uuidv7(now.getTime()),
    project_id: projectId,
    ...contentOf(req),
    status: deliverAt ? "scheduled" : "queued",
    created_at: now,
    expires_at: req.ttlSeconds === undefined ? null : new Date(from + req.ttlSeconds * 1000),
    deliver_at: deliverAt,
    require_ack: req.requireAck,
    repeat_every_seconds: req.requireAck ? (req.repeatEverySeconds ?? defaultRepeatSeconds) : null,
    escalate_after_seconds: req.escalateAfterSeconds ?? null,
    escalate_topic: req.escalateAfterSeconds === undefined ? null : req.escalateToTopic || null,
    escalate_project_id: ack.escalateProjectId,
    next_repeat_at: nextRepeatAt,
    escalate_at: escalateAt,
    actions: storedActions(req.actions),
  };
}
