/**
 * How far behind delivery is, for metrics: notifications waiting for their fan-out and push
 * deliveries waiting to be sent, with the age of the oldest of each that is due. Both read
 * partial indexes (`notification_queued`, `delivery_due`), so a scrape stays cheap.
 */
import type { Db } from "../orm.ts";

export interface QueueStats {
  /** Notifications committed but not yet fanned out to devices. */
  queued: number;
  /** Seconds since the oldest of them was published (0 when none). */
  oldestQueuedSeconds: number;
  /** Push deliveries pending (due now or waiting for a retry). */
  pending: number;
  /** Push deliveries due now. */
  due: number;
  /** Seconds the oldest due push delivery has waited past its due time (0 when none). */
  oldestDueSeconds: number;
}

export async function queueStats(db: Db): Promise<QueueStats> {
  const [row] = await db.execute<Record<string, string | number | null>[]>(
    `select (select count(*) from notification where status = 'queued') as queued,
            (select extract(epoch from now() - created_at) from notification
              where status = 'queued' order by id limit 1) as oldest_queued,
            count(*) as pending,
            count(*) filter (where next_attempt_at <= now()) as due,
            extract(epoch from now() - min(next_attempt_at)
                    filter (where next_attempt_at <= now())) as oldest_due
       from delivery where state = 'pending' and platform <> 'stream'`,
  );
  const n = (v: string | number | null | undefined) => Math.max(0, Number(v ?? 0));
  return {
    queued: n(row?.queued),
    oldestQueuedSeconds: n(row?.oldest_queued),
    pending: n(row?.pending),
    due: n(row?.due),
    oldestDueSeconds: n(row?.oldest_due),
  };
}
