/**
 * WebhookService: a project's webhook endpoints. The project is the caller's (an API key's, or
 * a CLI token's `Herald-Project` / default), so a credential of one project never sees or
 * changes another's endpoints; ids of other projects are `not_found`.
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { WebhookService } from "../../gen/herald/v1/webhook_service_pb.ts";
import type { ProjectRepository, WebhookEndpointRow, WebhookRepository } from "../db/index.ts";
import { privateAddressProblem } from "../delivery/senders/push-address.ts";
import { refusePublicUrl } from "../domain/public-url.ts";
import { heraldError } from "../errors.ts";
import { projectScope } from "./scope.ts";

export interface WebhookDeps {
  webhooks: WebhookRepository;
  projects: ProjectRepository;
  /** Endpoints may be private or loopback (a test setting). */
  allowPrivate: boolean;
}

const invalid = (field: string, message: string) =>
  heraldError("invalid_argument", `invalid request: ${field}`, {
    violations: [{ field, message }],
  });

export function endpointToProto(e: WebhookEndpointRow) {
  return {
    id: e.id,
    projectId: e.project_id,
    url: e.url,
    eventTypes: e.event_types,
    description: e.description,
    enabled: e.enabled,
    disabledReason: e.disabled_reason,
    consecutiveFailures: e.consecutive_failures,
    createdAt: timestampFromDate(new Date(e.created_at)),
    previousSecretUntil: e.previous_until
      ? timestampFromDate(new Date(e.previous_until))
      : undefined,
  };
}

const notFound = (id: string) => heraldError("not_found", `webhook endpoint ${id} not found`);

export function createWebhookService(deps: WebhookDeps): ServiceImpl<typeof WebhookService> {
  const { webhooks, projects, allowPrivate } = deps;

  /** The URL rules of a notification's link (public http/https), and a public address now. */
  const checkUrl = async (url: string) => {
    if (!/^https?:\/\//i.test(url)) throw invalid("url", "must be an http or https URL");
    if (allowPrivate) return;
    // A receiver on the operator's own network is common for a self-hosted server: say how.
    const lan =
      "; a receiver on your own network needs the operator's HERALD_WEBHOOK_ALLOW_PRIVATE=1";
    const why = refusePublicUrl(url);
    if (why) throw invalid("url", /public host/.test(why) ? `${why}${lan}` : why);
    const problem = await privateAddressProblem(new URL(url).hostname);
    if (problem) {
      const host = new URL(url).hostname;
      throw invalid("url", `host ${host} ${problem}${/private/.test(problem) ? lan : ""}`);
    }
  };

  return {
    async createWebhookEndpoint(req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      await checkUrl(req.url);
      const { endpoint, secret } = await webhooks.create(
        projectId,
        req.url,
        req.eventTypes,
        req.description,
      );
      return { endpoint: endpointToProto(endpoint), secret };
    },

    async listWebhookEndpoints(_req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      return { endpoints: (await webhooks.list(projectId)).map(endpointToProto) };
    },

    async deleteWebhookEndpoint(req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      if (!(await webhooks.delete(projectId, req.id))) throw notFound(req.id);
      return {};
    },

    async enableWebhookEndpoint(req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      const endpoint = await webhooks.enable(projectId, req.id);
      if (!endpoint) throw notFound(req.id);
      return { endpoint: endpointToProto(endpoint) };
    },

    async rotateWebhookSecret(req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      const rotated = await webhooks.rotate(projectId, req.id, req.overlapSeconds ?? 86_400);
      if (!rotated) throw notFound(req.id);
      return { endpoint: endpointToProto(rotated.endpoint), secret: rotated.secret };
    },

    async listWebhookAttempts(req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      const rows = await webhooks.attempts(projectId, req.endpointId, req.pageSize || 20);
      if (!rows) throw notFound(req.endpointId);
      return {
        attempts: rows.map((a) => ({
          eventId: a.event_id,
          eventType: a.event_type ?? "",
          attemptedAt: timestampFromDate(new Date(a.attempted_at)),
          statusCode: a.status_code,
          error: a.error,
          durationMs: a.duration_ms,
          succeeded: a.status_code >= 200 && a.status_code < 300,
        })),
      };
    },

    async replayWebhookEvent(req, ctx) {
      const { projectId } = await projectScope(ctx, projects);
      if (!(await webhooks.replay(projectId, req.endpointId, req.eventId))) {
        throw heraldError(
          "not_found",
          `event ${req.eventId} of webhook endpoint ${req.endpointId} not found`,
        );
      }
      return {};
    },
  };
}
