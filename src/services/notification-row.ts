/**
 * The row a publish inserts, from its request: every default filled in once (topic, priority,
 * the ttl's expiry, the acknowledgement's repeats and escalation, the stored actions).
 */
import type { NotifyRequest } from "../../gen/herald/v1/notify_service_pb.ts";
import type { NotificationRow } from "../db/repositories/notifications.ts";
import { ackSchedule, defaultRepeatSeconds } from "../domain/acknowledgement.ts";
import { storedActions } from "../domain/actions.ts";
import { uuidv7 } from "../domain/ids.ts";
import { deliverAtOf } from "../domain/schedule.ts";

/** The row a publish inserts: defaults filled in, `queued` for the fan-out or `scheduled`. */
export function rowOf(
  req: NotifyRequest,
  projectId: string,
  now: Date,
  ack: { escalateProjectId: string | null; scale: number },
): NotificationRow {
  const deliverAt = deliverAtOf(req, now);
  // A ttl counts from the delivery time, and so do repeats and the escalation.
  const from = (deliverAt ?? now).getTime();
  const { nextRepeatAt, escalateAt } = ackSchedule(req, new Date(from), ack.scale);
  return {
    id: uuidv7(now.getTime()),
    project_id: projectId,
    topic: req.topic || "default",
    title: req.title,
    message: req.message,
    priority: req.priority || "normal",
    click_url: req.clickUrl ?? null,
    metadata: req.metadata ?? null,
    ttl_seconds: req.ttlSeconds ?? null,
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
