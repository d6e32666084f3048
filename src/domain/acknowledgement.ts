/**
 * Acknowledge and escalate: the publish fields' rules, and when repeats and the escalation fall
 * due. A notification that asks for acknowledgement is sent again every `repeat_every_seconds`
 * (default 300) until a device acknowledges it, and escalated once after
 * `escalate_after_seconds` to another topic or project.
 */
import type { FieldViolation } from "../errors.ts";

export const defaultRepeatSeconds = 300;

export interface AckInput {
  requireAck?: boolean;
  repeatEverySeconds?: number | undefined;
  escalateAfterSeconds?: number | undefined;
  escalateToTopic?: string;
  escalateToProject?: string;
}

export function ackViolations(req: AckInput): FieldViolation[] {
  const out: FieldViolation[] = [];
  const onlyWithAck = (field: string) =>
    out.push({ field, message: "only with require_ack: true" });
  if (!req.requireAck) {
    if (req.repeatEverySeconds !== undefined) onlyWithAck("repeat_every_seconds");
    if (req.escalateAfterSeconds !== undefined) onlyWithAck("escalate_after_seconds");
  }
  const target = Boolean(req.escalateToTopic || req.escalateToProject);
  if (req.escalateAfterSeconds !== undefined && !target) {
    out.push({
      field: "escalate_after_seconds",
      message: "name where to escalate: escalate_to_topic and/or escalate_to_project",
    });
  }
  if (req.escalateAfterSeconds === undefined && target) {
    const field = req.escalateToTopic ? "escalate_to_topic" : "escalate_to_project";
    out.push({ field, message: "only with escalate_after_seconds" });
  }
  return out;
}

/** When the first repeat and the escalation fall due, from the delivery time. */
export function ackSchedule(req: AckInput, from: Date, scale: number) {
  if (!req.requireAck) return { nextRepeatAt: null, escalateAt: null };
  const at = (seconds: number) => new Date(from.getTime() + seconds * 1000 * scale);
  return {
    nextRepeatAt: at(req.repeatEverySeconds ?? defaultRepeatSeconds),
    escalateAt: req.escalateAfterSeconds === undefined ? null : at(req.escalateAfterSeconds),
  };
}
