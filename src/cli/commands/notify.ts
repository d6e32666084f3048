/** `herald notify TITLE …`: publish one notification. */
import { randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import { Herald, type Notification, type NotifyInput } from "../../sdk/index.ts";
import type { Command, Parsed } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { resourceJson } from "../format.ts";

/** How long `notify` with nothing given waits for standard input to say something. */
const stdinWaitMs = 200;

/** What the shared flags do (`herald help notify`). */
export const notifyFlags: Record<string, string> = {
  message: "-m TEXT: the body, up to 2048 characters; `-m -` reads it from standard input",
  topic: "-t NAME: routing label in the project (default: default)",
  priority: "-p low|normal|high (default: normal)",
  "click-url": "URL opened when the notification is tapped (public http/https)",
  metadata: "JSON object kept with the notification (at most 2048 bytes)",
  meta: "key=value added to the metadata; repeat for more",
  ttl: "seconds after which undelivered copies are dropped (default: none, 24 h cap)",
  "idempotency-key": "KEY: a retry with the same key is sent once (default: one per invocation)",
  at: "TIME: deliver at this RFC 3339 time (2026-11-23T18:00:00Z), at most 7 days ahead",
  in: "DURATION: deliver after this long: 90s, 10m, 2h, 1d, 1h30m (at most 7 days)",
};

/** The flags `notify` and `run` share. */
export const notifyOptions = {
  message: { type: "string", short: "m" },
  topic: { type: "string", short: "t" },
  priority: { type: "string", short: "p" },
  "click-url": { type: "string" },
  metadata: { type: "string" },
  meta: { type: "string", multiple: true },
  ttl: { type: "string" },
  "idempotency-key": { type: "string" },
  at: { type: "string" },
  in: { type: "string" },
} as const;

const durationUnits: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds in a duration like `90s`, `10m`, `1h30m`, `2d`; undefined when it is none. */
export function parseDuration(text: string): number | undefined {
  if (!/^(\d+[smhd])+$/.test(text)) return undefined;
  let seconds = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([smhd])/g)) {
    seconds += Number(n) * (durationUnits[unit as string] as number);
  }
  return seconds;
}

/** `--at` / `--in`: when to deliver (the server checks the range and names the field). */
function scheduleOf(values: Parsed["values"]): Pick<NotifyInput, "deliverAt" | "delaySeconds"> {
  if (values.at !== undefined && values.in !== undefined) {
    throw new CliError("give --at or --in, not both", exit.usage);
  }
  if (values.at !== undefined) return { deliverAt: values.at as string };
  if (values.in === undefined) return {};
  const seconds = parseDuration(values.in as string);
  if (seconds === undefined) {
    throw new CliError(
      `--in takes a duration like 90s, 10m, 2h or 1h30m, got ${JSON.stringify(values.in)}`,
      exit.usage,
    );
  }
  if (seconds < 1 || seconds > 7 * 86_400) {
    throw new CliError("--in must be 1s..7d: Herald schedules at most 7 days ahead", exit.usage);
  }
  return { delaySeconds: seconds };
}

/** Builds the publish request from the shared flags. */
export function notifyInput(
  title: string,
  values: Parsed["values"],
  message?: string,
): NotifyInput {
  const input: NotifyInput = { title, ...scheduleOf(values) };
  const msg = (values.message as string | undefined) ?? message;
  if (msg !== undefined) input.message = msg;
  if (values.topic) input.topic = values.topic as string;
  // As typed: the server names the allowed values if it is none of them.
  if (values.priority) input.priority = values.priority as NotifyInput["priority"];
  if (values["click-url"]) input.clickUrl = values["click-url"] as string;
  if (values.ttl !== undefined) {
    const ttl = Number(values.ttl);
    if (!Number.isInteger(ttl))
      throw new CliError("--ttl must be a whole number of seconds", exit.usage);
    input.ttlSeconds = ttl;
  }
  let metadata: Record<string, unknown> | undefined;
  if (values.metadata) {
    try {
      metadata = JSON.parse(values.metadata as string) as Record<string, unknown>;
    } catch {
      throw new CliError("--metadata must be a JSON object", exit.usage);
    }
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
      throw new CliError("--metadata must be a JSON object", exit.usage);
    }
  }
  for (const kv of (values.meta as string[] | undefined) ?? []) {
    const eq = kv.indexOf("=");
    if (eq < 1) throw new CliError(`--meta takes key=value, got ${JSON.stringify(kv)}`, exit.usage);
    metadata = { ...metadata, [kv.slice(0, eq)]: kv.slice(eq + 1) };
  }
  if (metadata) input.metadata = metadata as NotifyInput["metadata"];
  return input;
}

/** The SDK client with the publisher's credential (an API key, or the CLI token). */
export function heraldOf(ctx: Context): Herald {
  const secret = ctx.publisherSecret;
  return new Herald({
    ...(ctx.publisher?.kind === "API key" ? { apiKey: secret } : { token: secret }),
    baseUrl: ctx.url,
    ...(ctx.project ? { project: ctx.project } : {}),
  });
}

/** Publishes with one idempotency key for this invocation, reused by the SDK's retries. */
export async function publish(
  ctx: Context,
  input: NotifyInput,
  key?: string,
): Promise<Notification> {
  return heraldOf(ctx).notify(input, { idempotencyKey: key ?? randomUUID() });
}

/** A notification as `--json` prints it: every field (created_at, deliveries …), absent ones null. */
export function notificationJson(n: Notification): Record<string, unknown> {
  return {
    ...resourceJson(NotificationSchema, n),
    id: n.id,
    project_id: n.projectId,
    topic: n.topic,
    title: n.title,
    message: n.message,
    priority: n.priority,
    click_url: n.clickUrl ?? null,
    metadata: n.metadata ?? null,
    ttl_seconds: n.ttlSeconds ?? null,
    status: n.status,
    deliver_at: n.deliverAt ? timestampDate(n.deliverAt).toISOString() : null,
  };
}

export const notify: Command = {
  name: "notify",
  summary: "publish a notification (message with -m, or -m - for standard input)",
  usage:
    "herald notify TITLE [-m MESSAGE] [--topic T] [--priority low|normal|high] [--click-url URL] [--metadata JSON | --meta k=v …] [--ttl SECONDS] [--at TIME | --in DURATION] [--idempotency-key KEY]",
  options: notifyOptions,
  flags: notifyFlags,
  example: 'herald notify "Deploy finished" -m "api v42 is live" --priority high --topic deploys',
  async run(ctx, { values, positionals }) {
    let title = positionals.join(" ");
    let message: string | undefined;
    if (values.message === "-") {
      message = (await ctx.io.readStdin())?.replace(/\n$/, "");
    } else if (!title && values.message === undefined && !ctx.io.isTty) {
      // Nothing given: standard input's first line is the title, the rest the message. Only
      // then, and only if it says something soon: a loop's input or an idle pipe is not ours.
      const [first = "", ...rest] = ((await ctx.io.readStdin(stdinWaitMs)) ?? "").split("\n");
      title = first.trim();
      message = rest.join("\n").replace(/\n$/, "") || undefined;
    }
    if (!title)
      throw new CliError('a title is required: herald notify "Deploy finished"', exit.usage);
    const flags = values.message === "-" ? { ...values, message: undefined } : values;
    const n = await publish(
      ctx,
      notifyInput(title, flags, message),
      values["idempotency-key"] as string | undefined,
    );
    ctx.out(n.id, notificationJson(n));
    return exit.ok;
  },
};
