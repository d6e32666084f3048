/**
 * Answers to notifications with actions: a device answers (InboxService.RespondToNotification;
 * the first answer on any device wins), and the publisher waits for it
 * (NotifyService.WaitForResponse, a long poll woken by the answer's news).
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  RespondToNotificationRequest,
  RespondToNotificationResponseSchema,
} from "../../gen/herald/v1/inbox_service_pb.ts";
import type { Notification } from "../../gen/herald/v1/notification_pb.ts";
import type {
  WaitForResponseRequest,
  WaitForResponseResponseSchema,
} from "../../gen/herald/v1/notify_service_pb.ts";
import type { DeliveryQueue, NotificationRepository, OpenCall } from "../db/index.ts";
import { answerDeadline, answerViolation } from "../domain/actions.ts";
import { monotonicMs } from "../domain/clock.ts";
import type { NotificationRecord } from "../domain/notification.ts";
import { heraldError } from "../errors.ts";
import { notificationToProto } from "./mappers.ts";

/** Resolves when news of the notification may have come (an answer), after `ms`, or on abort. */
export type AwaitNews = (id: string, ms: number, signal: AbortSignal) => Promise<void>;

/** How long one wait lasts before the notification is read again (news can be missed). */
const rereadMs = 2_000;
const defaultTimeoutSeconds = 60;

type Outcome = "answered" | "dismissed" | "canceled" | "expired";

function deadlineOf(n: Notification): Date {
  const date = (t: Notification["createdAt"]) => (t ? timestampDate(t) : null);
  return answerDeadline({
    expires_at: date(n.expiresAt),
    deliver_at: date(n.deliverAt),
    created_at: date(n.createdAt) ?? new Date(0),
  });
}

function outcomeOf(n: Notification, now: Date): Outcome | undefined {
  if (n.response) return "answered";
  if (n.acknowledgedAt) return "dismissed";
  if (n.status === "canceled") return "canceled";
  if (deadlineOf(n) <= now) return "expired";
  return undefined;
}

export function createWaitForResponse(deps: {
  projectOf: (ctx: HandlerContext) => Promise<string>;
  withDeliveries: (projectId: string, id: string) => Promise<Notification>;
  awaitNews: AwaitNews;
  /** Counts the wait against the account's long polls (limit_exceeded past the cap). */
  openPoll: (ctx: HandlerContext) => Promise<OpenCall>;
}) {
  return async (
    req: WaitForResponseRequest,
    ctx: HandlerContext,
  ): Promise<MessageInitShape<typeof WaitForResponseResponseSchema>> => {
    const projectId = await deps.projectOf(ctx);
    const call = await deps.openPoll(ctx);
    try {
      return await waitFor(req, ctx, projectId, deps, call);
    } finally {
      await call.close();
    }
  };
}

async function waitFor(
  req: WaitForResponseRequest,
  ctx: HandlerContext,
  projectId: string,
  deps: Parameters<typeof createWaitForResponse>[0],
  call: OpenCall,
): Promise<MessageInitShape<typeof WaitForResponseResponseSchema>> {
  const end = monotonicMs() + (req.timeoutSeconds || defaultTimeoutSeconds) * 1000;
  for (;;) {
    call.touch();
    const n = await deps.withDeliveries(projectId, req.id);
    if (n.actions.length === 0) {
      throw heraldError(
        "failed_precondition",
        `notification ${req.id} has no actions: there is no answer to wait for`,
      );
    }
    const now = new Date();
    const outcome = outcomeOf(n, now);
    if (outcome) return { outcome, notification: n };
    const left = Math.min(end - monotonicMs(), deadlineOf(n).getTime() + 10 - now.getTime());
    if (left <= 0 || ctx.signal.aborted) return { outcome: "waiting", notification: n };
    await deps.awaitNews(req.id, Math.min(left, rereadMs), ctx.signal);
  }
}

/** Why a second answer was not taken, naming what came first. */
function alreadyAnswered(row: NotificationRecord | null | undefined) {
  const what = row?.response_action
    ? `answered "${row.response_action}" on device ${row.responded_by}`
    : `dismissed on device ${row?.acknowledged_by}`;
  return heraldError("already_answered", `notification ${row?.id} was already ${what}`);
}

export function createRespond(deps: {
  notifications: NotificationRepository;
  queue: DeliveryQueue;
  /** The calling device, when the notification is one of its deliveries (else not_found). */
  mine: (ctx: HandlerContext, id: string) => Promise<string>;
  /** After the answer (whose statement told every stream to clear it): the device's delivery is delivered. */
  answered: (id: string, deviceId: string) => Promise<void>;
}) {
  return async (
    req: RespondToNotificationRequest,
    ctx: HandlerContext,
  ): Promise<MessageInitShape<typeof RespondToNotificationResponseSchema>> => {
    const deviceId = await deps.mine(ctx, req.id);
    const row = await deps.notifications.byId(req.id);
    if (!row) throw heraldError("not_found", `notification ${req.id} not found`);
    if (!row.actions) {
      throw heraldError("failed_precondition", `notification ${req.id} has no actions to answer`);
    }
    const answer = { actionId: req.actionId, text: req.text };
    const violation = answerViolation(row.actions, answer);
    if (violation) {
      throw heraldError("invalid_argument", `invalid request: ${violation.field}`, {
        violations: [violation],
      });
    }
    if (row.responded_at || row.acknowledged_at) throw alreadyAnswered(row);
    if (row.status === "canceled" || answerDeadline(row) <= new Date()) {
      throw heraldError("expired", `notification ${req.id} can no longer be answered`);
    }
    const at = await deps.queue.respond(req.id, deviceId, answer);
    if (!at) throw alreadyAnswered(await deps.notifications.byId(req.id));
    await deps.answered(req.id, deviceId);
    const recorded = notificationToProto({
      ...row,
      responded_at: at,
      responded_by: deviceId,
      response_action: answer.actionId,
      response_text: answer.text,
    });
    return { response: recorded.response };
  };
}
