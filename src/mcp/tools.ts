/**
 * Herald as an MCP server: the tools an agent uses to reach its person (`notify`, `ask`) and to
 * read what it sent (`get_notification`, `list_notifications`), over the Node SDK with the
 * caller's own credential, so every rule, scope and limit of the API applies. The same server
 * runs over stdio (`herald mcp`) and Streamable HTTP (`/mcp`).
 *
 * Tool input uses the REST field names (snake_case). Descriptions state the field rules so a
 * model gets them right the first time; a refusal comes back as a tool error naming Herald's
 * error code, the fields, and what to change. Nothing here echoes the credential.
 */
import { toJson } from "@bufbuild/protobuf";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { NotificationSchema } from "../../gen/herald/v1/notification_pb.ts";
import { monotonicMs } from "../domain/clock.ts";
import { camelCase } from "../domain/notification.ts";
import type { Answer, Herald, Notification, NotifyInput } from "../sdk/index.ts";
import { answerFields, HeraldError } from "../sdk/index.ts";
import {
  askShape,
  idShape,
  listShape,
  notifyShape,
  type PublishArgs,
  publishFields,
} from "./schemas.ts";

export const mcpServerInfo = { name: "herald", version: "0.2.0" } as const;

/** A notification as tools return it: the REST JSON form. */
const asJson = (n: Notification) =>
  toJson(NotificationSchema, n, { useProtoFieldName: true }) as Record<string, unknown>;

function result(summary: string, data: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: `${summary}\n${JSON.stringify(data, null, 2)}` }],
    structuredContent: data,
  };
}

/** A refusal or failure as a tool error a model can act on. */
export function toolError(err: unknown): CallToolResult {
  const e = HeraldError.from(err);
  const fields = e.violations.map((v) => `- ${v.field}: ${v.message}`).join("\n");
  const hint: Record<string, string> = {
    invalid_argument: "Fix the fields named and call the tool again.",
    unauthenticated: "The server's credential was refused: the person must configure a valid one.",
    permission_denied: "This credential may not do that (a read-only key cannot publish).",
    not_found: "No such notification in this project: check the id.",
    rate_limited: "Too many calls: wait and try again.",
    quota_exceeded: "The monthly quota is used up: tell the person; do not retry.",
  };
  const text = [`Herald refused the call (${e.code}): ${e.message}`, fields, hint[e.code] ?? ""]
    .filter(Boolean)
    .join("\n");
  return { isError: true, content: [{ type: "text", text }] };
}

/** The publish request from tool arguments (snake_case in, the SDK's camelCase out). */
function publishInput(a: PublishArgs): NotifyInput {
  const input: Record<string, unknown> = {};
  for (const k of publishFields) if (a[k] !== undefined) input[camelCase(k)] = a[k];
  if (a.actions)
    input.actions = a.actions.map((x) => ({ id: x.id, label: x.label, reply: x.reply ?? false }));
  return input as NotifyInput;
}

const answerJson = (a: Answer) => ({ ...answerFields(a), notification_id: a.notification.id });

const askSummary: Record<Answer["outcome"], (a: Answer) => string> = {
  answered: (a) => `The person answered: ${a.actionId}${a.text ? ` ("${a.text}")` : ""}.`,
  dismissed: () => "The person dismissed the question without answering: treat it as a no.",
  expired: () => "Nobody answered before the question expired: treat it as no answer.",
  canceled: () => "The question was canceled before anyone answered.",
  timeout: () => "Nobody answered within the timeout: treat it as no answer.",
};

/** An MCP server whose tools act through `herald` (one credential, one project). */
export function createHeraldMcpServer(herald: Herald): McpServer {
  const server = new McpServer(mcpServerInfo);
  const guarded =
    <A>(run: (args: A, extra: Extra) => Promise<CallToolResult>) =>
    async (args: A, extra: Extra) => {
      try {
        return await run(args, extra);
      } catch (err) {
        return toolError(err);
      }
    };

  server.registerTool(
    "notify",
    {
      title: "Send a notification",
      description:
        "Sends a push notification to the person's own devices (phones, browsers, terminals) and returns it at once, with its id and status. Use it to report that work finished, failed or needs attention. Only `title` is required. Fields follow Herald's REST API (POST /v1/notify).",
      inputSchema: notifyShape,
      annotations: { openWorldHint: true },
    },
    guarded(async (args: PublishArgs) => {
      const key = args.idempotency_key;
      const n = await herald.notify(publishInput(args), key ? { idempotencyKey: key } : {});
      return result(`Sent: notification ${n.id} (${n.status}).`, asJson(n));
    }),
  );

  server.registerTool(
    "ask",
    {
      title: "Ask the person and wait for the answer",
      description:
        "Asks the person a question on their devices, with 1..3 buttons (`actions`), and waits until they choose one, dismiss it, or `timeout_seconds` pass (default 600). Returns `outcome` (answered, dismissed, expired, canceled, timeout) and, when answered, the chosen `action_id` and any typed `text`. Reports progress every 5 seconds while it waits. Use it before an irreversible step (deploy, delete, spend).",
      inputSchema: askShape,
      annotations: { openWorldHint: true },
    },
    guarded(async (args: PublishArgs & { timeout_seconds?: number }, extra) => {
      const token = extra._meta?.progressToken;
      const timeoutMs = (args.timeout_seconds ?? 600) * 1000;
      const input = publishInput(args);
      const started = monotonicMs();
      const progress = (message: string) => {
        if (token === undefined) return;
        void extra.sendNotification({
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress: (monotonicMs() - started) / 1000, // seconds waited: rising with each
            total: timeoutMs / 1000,
            message,
          },
        });
      };
      const answer = await herald.ask(
        { ...input, actions: input.actions ?? [] } as Parameters<Herald["ask"]>[0],
        {
          timeoutMs,
          ...(args.idempotency_key && { idempotencyKey: args.idempotency_key }),
          // Progress every 5 s keeps clients that reset their request timeout on progress
          // waiting as long as the question does, through a server restart too.
          pollSeconds: 5,
          signal: extra.signal,
          onProgress: (n) => progress(`waiting for the person (notification ${n.id}, ${n.status})`),
          onRetry: (e, ms) =>
            progress(
              `still waiting: connection to Herald lost (${e.message}), retrying in ${Math.ceil(ms / 1000)} s`,
            ),
        },
      );
      return result(askSummary[answer.outcome](answer), answerJson(answer));
    }),
  );

  server.registerTool(
    "get_notification",
    {
      title: "Get a notification",
      description:
        "Returns one notification of this project by `id` (a UUID from notify or ask): its status (queued, delivering, sent, delivered, failed, …), one entry per device, and the person's answer if it had actions.",
      inputSchema: idShape,
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ id }: { id: string }) => {
      const n = await herald.getNotification(id);
      return result(`Notification ${n.id}: ${n.status}.`, asJson(n));
    }),
  );

  server.registerTool(
    "list_notifications",
    {
      title: "List notifications",
      description:
        "Lists this project's notifications, newest first, optionally of one `topic`. `page_size` 1..100 (default 20); pass `next_page_token` back as `page_token` for more.",
      inputSchema: listShape,
      annotations: { readOnlyHint: true },
    },
    guarded(async (args: { topic?: string; page_size?: number; page_token?: string }) => {
      const page = await herald.listNotifications({
        ...(args.topic && { topic: args.topic }),
        ...(args.page_size && { pageSize: args.page_size }),
        ...(args.page_token && { pageToken: args.page_token }),
      });
      const data = {
        notifications: page.notifications.map(asJson),
        next_page_token: page.nextPageToken,
      };
      return result(`${page.notifications.length} notification(s).`, data);
    }),
  );
  return server;
}

/** What a tool callback gets besides its arguments (progress, cancellation). */
type Extra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number } | undefined;
  sendNotification: (n: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total: number; message: string };
  }) => Promise<void>;
};
