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
import type { DeliveryRepository } from "../db/repositories/deliveries.ts";
import type {
  NotificationRepository,
  NotificationRow,
  PublishResult,
} from "../db/repositories/notifications.ts";
import type { ProjectRepository } from "../db/repositories/projects.ts";
import type { UsageRepository } from "../db/repositories/usage.ts";
import { requestFingerprint } from "../domain/fingerprint.ts";
import { uuidv7 } from "../domain/ids.ts";
import { monthOf } from "../domain/month.ts";
import { heraldError } from "../errors.ts";
import { notificationToProto } from "./mappers.ts";
import { projectScope } from "./scope.ts";

const defaultPageSize = 20;

/** The response header that tells a replayed answer (REST answers it 200 instead of 202). */
export const replayedHeader = "idempotent-replayed";

/** The part of a publish request an idempotency fingerprint covers: the request itself. */
function fingerprintOf(req: NotifyRequest): Buffer {
  return requestFingerprint({
    title: req.title,
    message: req.message,
    topic: req.topic || "default",
    priority: req.priority || "normal",
    click_url: req.clickUrl ?? null,
    metadata: req.metadata ?? null,
    ttl_seconds: req.ttlSeconds ?? null,
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
  /** Called after a publish committed: wakes this process's delivery worker. */
  onPublished: () => void;
  projects: ProjectRepository;
  usage: UsageRepository;
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

/** The row a publish inserts: defaults filled in, `queued` for the fan-out. */
function rowOf(req: NotifyRequest, projectId: string, now: Date): NotificationRow {
  return {
    id: uuidv7(now.getTime()),
    project_id: projectId,
    topic: req.topic || "default",
    title: req.title,
    message: req.message,
    priority: req.priority || "normal",
    click_url: req.clickUrl ?? null,
    metadata: req.metadata ?? null,
    ttl_seconds: req.ttlSeconds ?? null,
    status: "queued",
    created_at: now,
    expires_at:
      req.ttlSeconds === undefined ? null : new Date(now.getTime() + req.ttlSeconds * 1000),
  };
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

export function createNotifyService(deps: NotifyDeps): ServiceImpl<typeof NotifyService> {
  const { notifications: store, deliveries, onPublished, projects, usage, config } = deps;
  const projectOf = async (ctx: HandlerContext) => (await projectScope(ctx, projects)).projectId;
  return {
    async notify(req, ctx) {
      const { projectId, accountId } = await projectScope(ctx, projects);
      const now = new Date();
      const row = rowOf(req, projectId, now);
      const response = create(NotifyResponseSchema, { notification: notificationToProto(row) });
      const key = ctx.requestHeader.get("idempotency-key");
      const fingerprint = key === null ? undefined : fingerprintOf(req);
      let result: PublishResult;
      if ((await usage.used(accountId, now)) >= config.monthlyQuota) {
        // Over quota, a retry of an earlier publish still gets its replay.
        const earlier =
          key !== null && fingerprint
            ? await store.lookupClaim(projectId, key, fingerprint)
            : undefined;
        if (!earlier) throw quotaExceeded(config.monthlyQuota, now);
        result = earlier;
      } else {
        result = await store.publish(
          row,
          key === null || fingerprint === undefined
            ? undefined
            : {
                key,
                fingerprint,
                response: toBinary(NotifyResponseSchema, response),
                ttlSeconds: config.idempotencyTtlSeconds,
                waitMs: config.idempotencyWaitMs,
              },
        );
        if (result.kind === "created") {
          usage.record(accountId);
          onPublished();
        }
      }
      if (result.kind === "busy" || result.kind === "mismatch") throw idempotencyConflict(result);
      const answer: MessageShape<typeof NotifyResponseSchema> =
        result.kind === "replay" ? fromBinary(NotifyResponseSchema, result.response) : response;
      if (result.kind === "replay") ctx.responseHeader.set(replayedHeader, "true");
      return answer;
    },

    async getNotification(req, ctx) {
      const row = await store.get(await projectOf(ctx), req.id);
      if (!row) throw heraldError("not_found", `notification ${req.id} not found`);
      // Counts come from the same rows as the entries: one query, one consistent moment.
      const perDevice = await deliveries.forNotification(row.id);
      const counts: Record<string, number> = {};
      for (const d of perDevice) counts[d.state] = (counts[d.state] ?? 0) + 1;
      return { notification: notificationToProto(row, counts, perDevice) };
    },

    async listNotifications(req, ctx) {
      const limit = req.pageSize || defaultPageSize;
      const rows = await store.list(await projectOf(ctx), {
        topic: req.topic || undefined,
        beforeId: req.pageToken ? parsePageToken(req.pageToken) : undefined,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const counts = await deliveries.summaries(page.map((r) => r.id));
      return {
        notifications: page.map((r) => notificationToProto(r, counts.get(r.id))),
        nextPageToken: rows.length > limit && last ? pageToken(last.id) : "",
      };
    },
  };
}
