/**
 * Replace in place, as the console shows it: one entry per replace key, the newest, with how
 * many earlier notifications it replaced (the history, GET /v1/notifications, keeps them all).
 */
import type { Notification } from "../../gen/herald/v1/notification_pb.ts";

export interface Entry {
  n: Notification;
  /** Earlier notifications with its replace key, shown in its place. */
  replaced: number;
}

/** The entries of a newest-first list. */
export function inPlace(notifications: readonly Notification[]): Entry[] {
  const byKey = new Map<string, Entry>();
  const entries: Entry[] = [];
  for (const n of notifications) {
    const kept = n.replaceKey ? byKey.get(n.replaceKey) : undefined;
    if (kept) {
      kept.replaced++;
      continue;
    }
    const entry = { n, replaced: 0 };
    if (n.replaceKey) byKey.set(n.replaceKey, entry);
    entries.push(entry);
  }
  return entries;
}
