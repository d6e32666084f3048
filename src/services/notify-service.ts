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
import type { DeliveryStore } from "../delivery/store.ts";
import { requestFingerprint } from "../domain/fingerprint.ts";
import { uuidv7 } from "../domain/ids.ts";
import { monthOf } from "../domain/month.ts";
import { idempotencyKeyViolation, notifyViolations } from "../domain/notify-rules.ts";
import { heraldError } from "../errors.ts";
import { restExchangeKey } from "../server/context.ts";
import type { DomainRule } from "../server/interceptors/validate.ts";
import type { AccountStore } from "../store/accounts.ts";
import type { NotificationRow, NotificationStore, PublishResult } from "../store/notifications.ts";
import type { UsageStore } from "../store/usage.ts";
import { notificationToProto } from "./notification-mapper.ts";
import { projectScope } from "./scope.ts";

const defaultPageSize = 20;

/** The publish rules protovalidate cannot express, for the validation interceptor. */
export const notifyRules: Record<string, DomainRule> = {
  "herald.v1.NotifyService/Notify": (message, header) => {
    const req = message as NotifyRequest;
    const out = notifyViolations(req);
    const key = header.get("idempotency-key");
    if (key !== null) {
      const v = idempotencyKeyViolation(key);
      if (v) out.push(v);
    }
    return out;
  },
};

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
  store: NotificationStore;
  deliveries: DeliveryStore;
  /** Called after a publish committed: wakes this process's delivery worker. */
  onPublished: () => void;
  accounts: AccountStore;
  usage: UsageStore;
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

export function createNotifyService({
  store,
  deliveries,
  onPublished,
  accounts,
  usage,
  config,
}: NotifyDeps): ServiceImpl<typeof NotifyService> {
  const projectOf = async (ctx: HandlerContext) => (await projectScope(ctx, accounts)).projectId;
  return {
    async notify(req, ctx) {
      const { projectId, accountId } = await projectScope(ctx, accounts);
      const rest = ctx.values.get(restExchangeKey);
      const now = new Date();
      const row: NotificationRow = {
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
      const response = create(NotifyResponseSchema, { notification: notificationToProto(row) });
      const key = ctx.requestHeader.get("idempotency-key");
      const fingerprint = key === null ? undefined : fingerprintOf(req);
      let result: PublishResult;
      if ((await usage.used(accountId, now)) >= config.monthlyQuota) {
        // Over quota, a retry of an earlier publish still gets its replay.
        const earlier =
          key !== null && fingerprint ? await store.lookup(projectId, key, fingerprint) : undefined;
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
              },
        );
        if (result.kind === "created") {
          usage.record(accountId);
          onPublished();
        }
      }
      if (result.kind === "busy") {
        throw heraldError(
          "idempotency_key_in_use",
          "a request with this Idempotency-Key is still in progress; retry shortly",
          { retryAfterSeconds: 1, metadata: { "retry-after": "1" } },
        );
      }
      if (result.kind === "mismatch") {
        throw heraldError(
          "idempotency_key_reused",
          "this Idempotency-Key was already used with a different request body in this project",
        );
      }
      const answer: MessageShape<typeof NotifyResponseSchema> =
        result.kind === "replay" ? fromBinary(NotifyResponseSchema, result.response) : response;
      if (result.kind === "replay") ctx.responseHeader.set("idempotent-replayed", "true");
      if (rest) {
        rest.status = result.kind === "created" ? 202 : 200;
        rest.headers.set("location", `/v1/notifications/${answer.notification?.id}`);
      }
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
