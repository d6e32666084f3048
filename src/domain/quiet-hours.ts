/**
 * A device's quiet hours: a time zone and a span of the day (minutes since midnight, local time).
 * During them, `low` and `normal` notifications arrive silently; `high` breaks through. A span
 * whose end is before its start runs over midnight (22:00 to 07:00).
 */
export interface QuietHours {
  timeZone: string;
  /** Minutes since local midnight. */
  start: number;
  end: number;
}

/** `HH:MM` as minutes since midnight. */
export const minutesOf = (clock: string) =>
  Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

/** Minutes since midnight as `HH:MM`. */
export const clockOf = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

/** Quiet hours as a person reads them, `22:00–07:00 Europe/Paris`; none: "". */
export const quietHoursText = (q: { start: string; end: string; timeZone: string } | undefined) =>
  q ? `${q.start}–${q.end} ${q.timeZone}` : "";

/** One formatter per time zone (building one costs more than a send); a bounded few. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether `timeZone` names an IANA time zone this server knows. */
export function knownTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The local time of day at `now` in `timeZone`, in minutes since midnight. */
export function localMinutes(timeZone: string, now: Date): number {
  const parts = formatter(timeZone).formatToParts(now);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return part("hour") * 60 + part("minute");
}

export function isQuiet(q: QuietHours, now: Date): boolean {
  const m = localMinutes(q.timeZone, now);
  return q.start < q.end ? m >= q.start && m < q.end : m >= q.start || m < q.end;
}

/** Whether a notification of `priority` arrives silently on a device with these quiet hours. */
export function silenced(priority: string, q: QuietHours | null, now: Date): boolean {
  return q !== null && priority !== "high" && isQuiet(q, now);
}

/** A device row's quiet hours (null columns: none). */
export function quietHoursOf(row: {
  quiet_tz: string | null;
  quiet_start: number | null;
  quiet_end: number | null;
}): QuietHours | null {
  if (row.quiet_tz === null || row.quiet_start === null || row.quiet_end === null) return null;
  return { timeZone: row.quiet_tz, start: row.quiet_start, end: row.quiet_end };
}
