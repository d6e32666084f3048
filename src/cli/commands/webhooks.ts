/** `herald webhooks …`: the project's webhook endpoints, their attempts and replays. */
import {
  type WebhookEndpoint,
  WebhookEndpointSchema,
  WebhookService,
} from "../../../gen/herald/v1/webhook_service_pb.ts";
import { webhookEventTypes } from "../../domain/webhook-events.ts";
import type { Command } from "../command.ts";
import { type Context, exit } from "../context.ts";
import { confirm, need, resolveId, resourceJson, table, when, wholeFlag } from "../format.ts";

const client = (ctx: Context) => ctx.client(WebhookService);
const headers = (ctx: Context) => ({ headers: ctx.headers(ctx.publisherSecret) });

/** The endpoint a typed id (or unique prefix) names. */
async function endpointId(ctx: Context, typed: string): Promise<string> {
  return resolveId(typed, "webhook endpoint", async () =>
    (await client(ctx).listWebhookEndpoints({}, headers(ctx))).endpoints.map((e) => ({
      id: e.id,
      label: e.url,
    })),
  );
}

/** Prints a secret shown once (the warning on standard error), and the endpoint with --json. */
function showSecret(ctx: Context, res: { secret: string; endpoint?: WebhookEndpoint }) {
  if (!ctx.flags.json) {
    ctx.io.stderr("This signing secret is shown once and cannot be recovered. Store it now:\n");
  }
  const endpoint = res.endpoint ? resourceJson(WebhookEndpointSchema, res.endpoint) : {};
  ctx.out(res.secret, { secret: res.secret, ...endpoint });
}

export const webhooks: Command[] = [
  {
    name: "webhooks create",
    summary: "register a webhook endpoint (its signing secret is shown once)",
    usage: "herald webhooks create URL --event TYPE … [--description TEXT]",
    options: { event: { type: "string", multiple: true }, description: { type: "string" } },
    flags: {
      event: `${webhookEventTypes.join(", ")} (repeat for more)`,
      description: "a label",
    },
    example: "herald webhooks create https://ci.example.com/herald --event delivery.failed",
    async run(ctx, { positionals, values }) {
      const [url] = need(positionals, 1, "herald webhooks create URL --event TYPE");
      const res = await client(ctx).createWebhookEndpoint(
        {
          url,
          eventTypes: (values.event as string[] | undefined) ?? [],
          description: (values.description as string | undefined) ?? "",
        },
        headers(ctx),
      );
      showSecret(ctx, res);
      return exit.ok;
    },
  },
  {
    name: "webhooks list",
    summary: "the project's webhook endpoints, and why one is disabled",
    usage: "herald webhooks list",
    options: {},
    example: "herald webhooks list --json",
    async run(ctx) {
      const { endpoints } = await client(ctx).listWebhookEndpoints({}, headers(ctx));
      ctx.out(
        table([
          ["ID", "URL", "EVENTS", "STATE", "FAILURES", "CREATED"],
          ...endpoints.map((e) => [
            e.id,
            e.url,
            e.eventTypes.join(","),
            e.enabled ? "enabled" : `disabled: ${e.disabledReason}`,
            String(e.consecutiveFailures),
            when(e.createdAt),
          ]),
        ]),
        endpoints.map((e) => resourceJson(WebhookEndpointSchema, e)),
      );
      return exit.ok;
    },
  },
  {
    name: "webhooks delete",
    summary: "delete a webhook endpoint",
    usage: "herald webhooks delete ID [--yes]",
    options: { yes: { type: "boolean", short: "y" } },
    flags: { yes: "delete without asking (scripts)" },
    example: "herald webhooks delete 01a20e --yes",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald webhooks delete ID");
      const id = await endpointId(ctx, typed as string);
      await confirm(
        ctx,
        `Delete webhook endpoint ${id}? Nothing more is sent to it`,
        values.yes === true,
      );
      await client(ctx).deleteWebhookEndpoint({ id }, headers(ctx));
      ctx.out(`deleted ${id}`, { id, deleted: true });
      return exit.ok;
    },
  },
  {
    name: "webhooks enable",
    summary: "enable a disabled webhook endpoint; what waited is sent now",
    usage: "herald webhooks enable ID",
    options: {},
    example: "herald webhooks enable 01a20e",
    async run(ctx, { positionals }) {
      const [typed] = need(positionals, 1, "herald webhooks enable ID");
      const id = await endpointId(ctx, typed as string);
      const { endpoint } = await client(ctx).enableWebhookEndpoint({ id }, headers(ctx));
      ctx.out(`enabled ${id}`, endpoint ? resourceJson(WebhookEndpointSchema, endpoint) : {});
      return exit.ok;
    },
  },
  {
    name: "webhooks rotate",
    summary: "a new signing secret (shown once); the old one signs too for the overlap",
    usage: "herald webhooks rotate ID [--overlap SECONDS]",
    options: { overlap: { type: "string" } },
    flags: { overlap: "seconds the old secret keeps signing too (default 86400)" },
    example: "herald webhooks rotate 01a20e --overlap 3600",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald webhooks rotate ID");
      // Checked before the id is looked up; before, `--overlap 1h` was sent as NaN.
      const overlap =
        values.overlap === undefined
          ? undefined
          : wholeFlag(values, "overlap", { min: 0, max: 604_800, fallback: 86_400 });
      const id = await endpointId(ctx, typed as string);
      const res = await client(ctx).rotateWebhookSecret(
        { id, ...(overlap === undefined ? {} : { overlapSeconds: overlap }) },
        headers(ctx),
      );
      showSecret(ctx, res);
      return exit.ok;
    },
  },
  {
    name: "webhooks attempts",
    summary: "an endpoint's delivery attempts, newest first",
    usage: "herald webhooks attempts ID [--limit N]",
    options: { limit: { type: "string" } },
    flags: {
      limit: "N: how many of the latest attempts (default 20)",
    },
    example: "herald webhooks attempts 01a20e --limit 5",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald webhooks attempts ID");
      const pageSize = wholeFlag(values, "limit", { min: 1, max: 100, fallback: 20 });
      const id = await endpointId(ctx, typed as string);
      const { attempts } = await client(ctx).listWebhookAttempts(
        { endpointId: id, pageSize },
        headers(ctx),
      );
      ctx.out(
        table([
          ["WHEN", "EVENT", "TYPE", "STATUS", "MS", "ERROR"],
          ...attempts.map((a) => [
            when(a.attemptedAt),
            a.eventId,
            a.eventType,
            a.statusCode ? String(a.statusCode) : "-",
            String(a.durationMs),
            a.error,
          ]),
        ]),
        attempts.map((a) => ({
          event_id: a.eventId,
          event_type: a.eventType,
          attempted_at: when(a.attemptedAt),
          status_code: a.statusCode,
          succeeded: a.succeeded,
          error: a.error,
          duration_ms: a.durationMs,
        })),
      );
      return exit.ok;
    },
  },
  {
    name: "webhooks replay",
    summary: "send an event to an endpoint again, with the same webhook-id",
    usage: "herald webhooks replay ENDPOINT_ID EVENT_ID",
    options: {},
    example: "herald webhooks replay 01a20e 01a21f",
    async run(ctx, { positionals }) {
      const [typed, eventId] = need(positionals, 2, "herald webhooks replay ENDPOINT_ID EVENT_ID");
      const id = await endpointId(ctx, typed as string);
      await client(ctx).replayWebhookEvent(
        { endpointId: id, eventId: eventId as string },
        headers(ctx),
      );
      ctx.out(`queued ${eventId} for ${id}`, { endpoint_id: id, event_id: eventId, queued: true });
      return exit.ok;
    },
  },
];
