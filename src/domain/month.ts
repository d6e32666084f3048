/** The calendar month (UTC) containing `at`: [start, end). Quotas count per such month. */
export function monthOf(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The smallest UUIDv7 of a millisecond: ids at or after `ms` compare greater or equal. */
export function uuidv7Floor(ms: number): string {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}
