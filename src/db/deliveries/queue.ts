/**
 * The delivery queue as the worker and the stream hub use it: each operation is one statement
 * in a file of its own beside this one (as graphile-worker keeps them), bound here to a pool.
 */

import {
  acknowledge,
  claimClears,
  escalateDue,
  repeatDue,
} from "../notifications/acknowledgements.ts";
import { fanOut } from "../notifications/fan-out.ts";
import { respond } from "../notifications/responses.ts";
import { cancel, releaseDue } from "../notifications/schedule.ts";
import type { Orm } from "../orm.ts";
import { type ClaimShare, claimDue } from "./claim-due.ts";
import { probeDue } from "./due-probe.ts";
import { expireStreamDeliveries } from "./expire-streams.ts";
import { markStreamed } from "./mark-streamed.ts";
import { type DeliveryKey, type Outcome, settle } from "./settle.ts";
import { queueStats } from "./stats.ts";
import { clearedSince, deliveredTo, pendingStream, streamBacklog } from "./stream-backlog.ts";

export function createDeliveryQueue(orm: Orm, leaseSeconds: number) {
  const db = () => orm.em.getConnection();
  return {
    /** Which of the statements below have work (due-probe.ts). */
    probeDue: () => probeDue(db()),
    fanOut: (limit: number, chunk: number) => fanOut(db(), limit, chunk),
    releaseDue: (limit: number) => releaseDue(db(), limit),
    repeatDue: (limit: number, scale: number) => repeatDue(db(), limit, scale),
    escalateDue: (limit: number) => escalateDue(db(), limit),
    acknowledge: (id: string, deviceId: string) => acknowledge(db(), id, deviceId),
    claimClears: (limit: number) => claimClears(db(), limit),
    respond: (id: string, deviceId: string, answer: { actionId: string; text: string }) =>
      respond(db(), id, deviceId, answer),
    /** The device's notifications acknowledged or answered in the last `withinMs`. */
    clearedSince: (deviceId: string, withinMs: number) => clearedSince(db(), deviceId, withinMs),
    /** Of these notifications, those the device has a delivery of. */
    deliveredTo: (deviceId: string, ids: readonly string[]) => deliveredTo(db(), deviceId, ids),
    cancel: (projectId: string, id: string) => cancel(db(), projectId, id),
    claimDue: (limit: number, share: ClaimShare) => claimDue(db(), limit, leaseSeconds, share),
    settle: (items: readonly { delivery: DeliveryKey; outcome: Outcome }[]) => settle(db(), items),
    /**
     * Fresh planner statistics for the delivery table. After a fan-out of thousands, until
     * autovacuum's next look (up to a minute), the planner believes a handful of rows are due:
     * each claim then joined every due row to its device and sorted them all (15-20 ms for
     * 10,000, growing with the fan-out) instead of reading 500 in index order (1 ms).
     */
    analyze: async () => {
      await db().execute("analyze delivery");
    },
    expireStreamDeliveries: () => expireStreamDeliveries(db()),
    streamBacklog: (deviceId: string, opts: Parameters<typeof streamBacklog>[2]) =>
      streamBacklog(db(), deviceId, opts),
    pendingStream: (deviceId: string, minAgeMs: number) => pendingStream(db(), deviceId, minAgeMs),
    markStreamed: (deviceId: string, ids: readonly string[]) => markStreamed(db(), deviceId, ids),
    stats: () => queueStats(db()),
    /** The pool's connections: in use, idle, and callers waiting for one. */
    poolStats: async () => {
      const pool = await db().getNativeClient();
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
  };
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;
