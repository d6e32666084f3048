/**
 * NotifyService.WatchNotifications: a project's newest notifications, sent at once and again
 * whenever they may have changed (the console's live feed, without polling). News comes from
 * the stream hub (delivery/streams/wakers.ts); delivery states change without news, so the page
 * is read again at least every `refreshMs` too, and never less often than a live stream's
 * keepalive: each page says that interval, by which a client tells a stream a network dropped
 * without a word (domain/stream-silence.ts). Bursts of news are read once per `settleMs`.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { Notification } from "../../gen/herald/v1/notification_pb.ts";
import type {
  WatchNotificationsRequest,
  WatchNotificationsResponseSchema,
} from "../../gen/herald/v1/notify_service_pb.ts";
import type { OpenCall } from "../db/index.ts";
import { waitForNews } from "../delivery/streams/wait-for-news.ts";

type Page = MessageInitShape<typeof WatchNotificationsResponseSchema>;

export interface WatchDeps {
  projectOf: (ctx: HandlerContext) => Promise<string>;
  /** The newest `limit` of the project (of `topic`, when given), with delivery summaries. */
  newest: (projectId: string, topic: string, limit: number) => Promise<Notification[]>;
  /** Calls `wake` when the project's notifications may have changed; returns how to stop. */
  watch: (projectId: string, wake: () => void) => () => void;
  /** Counts the watch against the account's long polls. */
  openPoll: (ctx: HandlerContext) => Promise<OpenCall>;
  /** Aborted when the server begins to shut down. */
  ending: AbortSignal;
  /** The longest a live stream stays silent (HERALD_STREAM_KEEPALIVE_MS). */
  keepaliveMs: number;
  refreshMs?: number;
  settleMs?: number;
}

export function createWatchNotifications(deps: WatchDeps) {
  const { settleMs = 100 } = deps;
  const refreshMs = Math.min(deps.refreshMs ?? 5_000, deps.keepaliveMs);
  const refreshInterval = durationFromMs(refreshMs);
  return async function* watchNotifications(
    req: WatchNotificationsRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<Page> {
    const projectId = await deps.projectOf(ctx);
    const call = await deps.openPoll(ctx);
    const ended = AbortSignal.any([ctx.signal, deps.ending]);
    let news = false;
    let wake: (() => void) | undefined;
    const unwatch = deps.watch(projectId, () => {
      news = true;
      wake?.();
    });
    try {
      while (!ended.aborted) {
        call.touch();
        news = false;
        const notifications = await deps.newest(projectId, req.topic, req.pageSize || 20);
        yield { notifications, refreshInterval };
        if (!news) {
          const quiet = waitForNews(refreshMs, ended);
          wake = quiet.wake;
          await quiet.timedOut;
          wake = undefined;
        }
        await waitForNews(settleMs, ended).timedOut;
      }
    } finally {
      unwatch();
      await call.close();
    }
  };
}
