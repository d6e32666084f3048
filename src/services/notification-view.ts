/** A notification as its publisher reads it: with delivery counts and one entry per device. */
import type { DeliveryRepository, NotificationRepository } from "../db/index.ts";
import { heraldError } from "../errors.ts";
import { notificationToProto } from "./mappers.ts";

/** The notification of the project, or not_found; counts and entries from one read. */
export async function notificationWithDeliveries(
  store: NotificationRepository,
  deliveries: DeliveryRepository,
  projectId: string,
  id: string,
) {
  const row = await store.get(projectId, id);
  if (!row) throw heraldError("not_found", `notification ${id} not found`);
  // Counts come from the same rows as the entries: one query, one consistent moment.
  const perDevice = await deliveries.forNotification(row.id);
  const counts: Record<string, number> = {};
  for (const d of perDevice) counts[d.state] = (counts[d.state] ?? 0) + 1;
  return notificationToProto(row, counts, perDevice);
}
