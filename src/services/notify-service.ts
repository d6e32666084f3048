/**
 * NotifyService: publish, get and list. Authentication, rate limits and input validation have
 * already run in the interceptors; handlers see a principal and a valid request.
 */
import { create, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type NotifyRequest,
  NotifyResponseSchema,
  type NotifyService,
} from "../../gen/herald/v1/notify_service_pb.ts";
import type { Config } from "../config.ts";
import type {
  CancelOutcome,
  DeliveryRepository,
  NotificationRepository,
  OpenCallRepository,
  ProjectRepository,
  PublishResult,
  QuotaLedger,
  UsageRepository,
} from "../db/index.ts";
import { limitExceeded } from "../db/index.ts";
import { storedActions } from "../domain/actions.ts";
import { requestFingerprint } from "../domain/fingerprint.ts";
import { monthOf } from "../domain/month.ts";
import { contentOf, type NotificationRecord, recordOf } from "../domain/notification.ts";
import { heraldError } from "../errors.ts";
import { callKey } from "./context.ts";
import { notificationToProto } from "./mappers.ts";
import { notificationWithDeliveries } from "./notification-view.ts";
import { type AwaitNews, createWaitForResponse } from "./responses.ts";
import { principalOf, projectScope } from "./scope.ts";
import { createWatchNotifications } from "./watch-notifications.ts";

const defaultPageSize = 20;

/** The part of a publish request an idempotency fingerprint covers: the request itself. */
function fingerprintOf(req: NotifyRequest): Buffer {
  const { replace_key, ...content } = contentOf(req);
  return requestFingerprint({
    ...content,
    // Only when given, so that fingerprints of requests without one stay as they were.
    ...(replace_key !== null && { replace_key }),
    // Only when given, so that fingerprints of requests without a schedule stay as they were.
    ...(req.deliverAt !== undefined && { deliver_at: req.deliverAt }),
    ...(req.delaySeconds !== undefined && { delay_seconds: req.delaySeconds }),
    ...(req.requireAck && {
      require_ack: true,
      repeat_every_seconds: req.repeatEverySeconds ?? null,
      escalate_after_seconds: req.escalateAfterSeconds ?? null,
      escalate_to_topic: req.escalateToTopic,
      escalate_to_project: req.escalateToProject,
    }),
    ...(req.actions.length > 0 && { actions: storedActions(req.actions) }),
  });
}

function pageToken(id: string): string {
  return Buffer.from(id, "utf8").toString("base64url");
}

function parsePageToken(token: string): string {
  const id = Buffer.from(token, "base64url").toString("utf8");
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
    throw heraldError("invalid_argument", "invalid page_token", {
      violations: [{ field: "page_token", message: "is not a token this service issued" }],
    });
  }
  return id;
}

export interface NotifyDeps {
  notifications: NotificationRepository;
  deliveries: DeliveryRepository;
  /**
   * Called after a publish committed: hands it to this process's streams, and wakes the worker
   * when its fan-out, or push deliveries its commit made, wait for one (`forWorker`).
   */
  onPublished: (row: NotificationRecord, accountId: string, forWorker: boolean) => void;
  projects: ProjectRepository;
  usage: UsageRepository;
  quota: QuotaLedger;
  /** Resolves when news of the notification (an answer) may have come, or after `ms`. */
  awaitNews: AwaitNews;
  /** Cancels what of a notification was not sent (db/notifications/schedule.ts). */
  cancel: (projectId: string, id: string) => Promise<CancelOutcome>;
  /** Long polls, counted against the account's cap in every process. */
  openCalls: OpenCallRepository;
  /** Wakes a live feed when its project's notifications may have changed (stream hub). */
  watchFeed: (projectId: string, wake: () => void) => () => void;
  /** Aborted when the server begins to shut down. */
  ending: AbortSignal;
  config: Config;
}

function quotaExceeded(quota: number, now: Date) {
  const retry = Math.ceil((monthOf(now).end.getTime() - now.getTime()) / 1000);
  return heraldError(
    "quota_exceeded",
    `the monthly quota of ${quota} notifications is used up; it renews at the start of next month (UTC)`,
    { retryAfterSeconds: retry, metadata: { "retry-after": String(retry) } },
  );
}

function idempotencyConflict(result: { kind: "busy" | "mismatch" }) {
  return result.kind === "busy"
    ? heraldError(
        "idempotency_key_in_use",
        "a request with this Idempotency-Key is still in progress; retry shortly",
        { retryAfterSeconds: 1, metadata: { "retry-after": "1" } },
      )
    : heraldError(
        "idempotency_key_reused",
        "this Idempotency-Key was already used with a different request body in this project",
      );
}

/** The idempotency claim of a publish with an Idempotency-Key. */
function claimOf(
  key: string | null,
  fingerprint: Buffer | undefined,
  response: MessageShape<typeof NotifyResponseSchema>,
  config: Config,
) {
  if (key === null || fingerprint === undefined) return undefined;
  return {
    key,
    fingerprint,
    response: toBinary(NotifyResponseSchema, response),
    ttlSeconds: config.idempotencyTtlSeconds,
    waitMs: config.idempotencyWaitMs,
  };
}

export function createNotifyService(deps: NotifyDeps): ServiceImpl<typeof NotifyService> {
  const { notifications: store, deliveries, onPublished, projects, usage, quota, config } = deps;
  const { cancel, awaitNews } = deps;
  const projectOf = async (ctx: HandlerContext) => (await projectScope(ctx, projects)).projectId;
  /** The project an escalation goes to, named by the publisher (of the same account). */
  const escalationProject = async (req: NotifyRequest, accountId: string, ctx: HandlerContext) => {
    if (!req.escalateToProject || req.escalateAfterSeconds === undefined) return null;
    const p = await projects.resolve(accountId, req.escalateToProject);
    if (!p) {
      throw heraldError("invalid_argument", "invalid request: escalate_to_project", {
        violations: [{ field: "escalate_to_project", message: "names no project of this account" }],
      });
    }
    // A project's key stays within its authority: its own project, or one that accepts it.
    const caller = principalOf(ctx);
    if (caller.kind === "apiKey" && p.id !== caller.projectId && !p.acceptsEscalations) {
      throw heraldError(
        "permission_denied",
        `project ${p.name} does not accept escalations from other projects' API keys: its owner can allow them (POST /v1/projects/${p.id}/accepts-escalations), or publish with a CLI token`,
      );
    }
    return p.id;
  };
  const withDeliveries = (projectId: string, id: string) =>
    notificationWithDeliveries(store, deliveries, projectId, id);
  /** Room for one more scheduled notification; a retry of an earlier publish gets its replay. */
  const scheduledRoom = async (projectId: string, key: string | null, fp: Buffer | undefined) => {
    const cap = config.limits.scheduledPerProject;
    if ((await store.scheduledCount(projectId)) < cap) return;
    if (key !== null && fp && (await store.lookupClaim(projectId, key, fp))) return;
    throw limitExceeded("scheduledPerProject", cap);
  };
  const withSummaries = async (rows: NotificationRecord[]) => {
    const counts = await deliveries.summaries(rows.map((r) => r.id));
    return rows.map((r) => notificationToProto(r, counts.get(r.id)));
  };
  const openPoll = (ctx: HandlerContext) =>
    deps.openCalls.open("long_poll", principalOf(ctx).accountId, {
      limit: "longPollsPerAccount",
      value: config.limits.longPollsPerAccount,
    });
  return {
    async notify(req, ctx) {
      const { projectId, accountId } = await projectScope(ctx, projects);
      const now = new Date();
      const escalateProjectId = await escalationProject(req, accountId, ctx);
      const row = recordOf(req, projectId, now, {
        escalateProjectId,
        scale: config.ackIntervalScale,
      });
      const response = create(NotifyResponseSchema, { notification: notificationToProto(row) });
      const key = ctx.values.get(callKey).idempotencyKey ?? null;
      const fingerprint = key === null ? undefined : fingerprintOf(req);
      let result: PublishResult;
      if (row.status === "scheduled") await scheduledRoom(projectId, key, fingerprint);
      if (!(await quota.take(accountId, now))) {
        // Over quota, a retry of an earlier publish still gets its replay.
        const earlier =
          key !== null && fingerprint
            ? await store.lookupClaim(projectId, key, fingerprint)
            : undefined;
        if (!earlier) throw quotaExceeded(config.monthlyQuota, now);
        result = earlier;
      } else {
        try {
          result = await store.publish(row, claimOf(key, fingerprint, response, config));
        } catch (err) {
          quota.giveBack(accountId, now);
          throw err;
        }
        if (result.kind === "created") {
          usage.record(accountId);
          // A scheduled one waits for the worker's clock.
          if (row.status === "queued") onPublished(row, accountId, result.forWorker);
        } else quota.giveBack(accountId, now);
      }
      if (result.kind === "busy" || result.kind === "mismatch") throw idempotencyConflict(result);
      // A replay: the first answer, as it was, saying that it is one.
      if (result.kind === "replay")
        return { ...fromBinary(NotifyResponseSchema, result.response), replayed: true };
      return response;
    },

    async getNotification(req, ctx) {
      return { notification: await withDeliveries(await projectOf(ctx), req.id) };
    },

    async cancelNotification(req, ctx) {
      const projectId = await projectOf(ctx);
      const outcome = await cancel(projectId, req.id);
      if (outcome === "not_found")
        throw heraldError("not_found", `notification ${req.id} not found`);
      if (outcome === "fanning_out") {
        throw heraldError(
          "not_cancelable",
          "the notification is being fanned out to devices right now; try again in a second",
          { retryAfterSeconds: 1, metadata: { "retry-after": "1" } },
        );
      }
      if (outcome === "too_late") {
        throw heraldError(
          "not_cancelable",
          "every device's copy was already sent or settled; there is nothing left to cancel",
        );
      }
      return { notification: await withDeliveries(projectId, req.id) };
    },

    waitForResponse: createWaitForResponse({ projectOf, withDeliveries, awaitNews, openPoll }),

    async listNotifications(req, ctx) {
      const limit = req.pageSize || defaultPageSize;
      const rows = await store.list(await projectOf(ctx), {
        topic: req.topic || undefined,
        beforeId: req.pageToken ? parsePageToken(req.pageToken) : undefined,
        limit: limit + 1,
      });
      const last = rows.at(limit - 1);
      return {
        notifications: await withSummaries(rows.slice(0, limit)),
        nextPageToken: rows.length > limit && last ? pageToken(last.id) : "",
      };
    },

    watchNotifications: createWatchNotifications({
      projectOf,
      openPoll,
      watch: deps.watchFeed,
      ending: deps.ending,
      keepaliveMs: deps.config.streamKeepaliveMs,
      newest: async (projectId, topic, limit) =>
        withSummaries(await store.list(projectId, { topic: topic || undefined, limit })),
    }),
  };
}
