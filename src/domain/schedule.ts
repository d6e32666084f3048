/**
 * Scheduled delivery: `deliver_at` (an RFC 3339 date-time with an offset) or `delay_seconds`,
 * at most 7 days ahead. A time up to a minute in the past (clocks disagree) means "now"; one
 * further back is refused, since a schedule meant for the past is a mistake worth hearing about.
 */
import type { FieldViolation } from "../errors.ts";

export const maxScheduleSeconds = 7 * 86_400;
const pastToleranceMs = 60_000;
const rfc3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export interface ScheduleInput {
  deliverAt?: string | undefined;
  delaySeconds?: number | undefined;
}

/** The time an RFC 3339 date-time names, or undefined when it is not one. */
export function parseRfc3339(s: string): Date | undefined {
  const m = rfc3339.exec(s);
  if (!m) return undefined;
  const [month = 0, day = 0, hour = 0, minute = 0, second = 0] = [m[2], m[3], m[4], m[5], m[6]].map(
    Number,
  );
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return undefined;
  }
  const t = Date.parse(s.toUpperCase());
  return Number.isNaN(t) ? undefined : new Date(t);
}

export function scheduleViolations(req: ScheduleInput, now: Date): FieldViolation[] {
  if (req.deliverAt === undefined) return [];
  if (req.delaySeconds !== undefined) {
    return [{ field: "deliver_at", message: "give deliver_at or delay_seconds, not both" }];
  }
  const at = parseRfc3339(req.deliverAt);
  if (!at) {
    return [
      {
        field: "deliver_at",
        message: "must be an RFC 3339 date-time with an offset, e.g. 2026-11-23T18:00:00Z",
      },
    ];
  }
  if (at.getTime() < now.getTime() - pastToleranceMs) {
    return [{ field: "deliver_at", message: "must not be in the past" }];
  }
  if (at.getTime() > now.getTime() + maxScheduleSeconds * 1000) {
    return [{ field: "deliver_at", message: "must be at most 7 days ahead" }];
  }
  return [];
}

/** When a valid request is to be fanned out: a future time, or null for now. */
export function deliverAtOf(req: ScheduleInput, now: Date): Date | null {
  const at =
    req.delaySeconds !== undefined
      ? new Date(now.getTime() + req.delaySeconds * 1000)
      : req.deliverAt !== undefined
        ? (parseRfc3339(req.deliverAt) as Date)
        : undefined;
  return at && at.getTime() > now.getTime() ? at : null;
}
