/**
 * The MCP tools' input schemas, with the field rules written where a model reads them. The
 * server checks every rule again (the same ones as POST /v1/notify); these say them up front.
 */
import { z } from "zod";

const topic = z
  .string()
  .regex(/^[a-z0-9_-]{0,64}$/)
  .describe("Routing label: lowercase letters, digits, - and _, up to 64 (default: `default`)");

const action = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .describe("What you get back when chosen: 1..64 letters, digits, _ - or ., unique"),
  label: z.string().min(1).max(40).describe("The button's text, 1..40 characters"),
  reply: z
    .boolean()
    .optional()
    .describe("If true, the person types a text answer (returned as `text`)"),
});

/** The publish fields, as POST /v1/notify takes them. */
const publish = {
  title: z.string().min(1).max(120).describe("Headline, 1..120 characters, not blank (required)"),
  message: z.string().max(2048).optional().describe("Body text, up to 2048 characters"),
  topic: topic.optional(),
  priority: z
    .enum(["low", "normal", "high"])
    .optional()
    .describe("low, normal (default) or high; high breaks through on phones"),
  click_url: z
    .string()
    .max(2048)
    .optional()
    .describe("Public http(s) URL opened on tap; no localhost or private addresses"),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("JSON object kept with the notification, at most 2048 bytes compact"),
  ttl_seconds: z
    .number()
    .int()
    .min(30)
    .max(86400)
    .optional()
    .describe("Drop undelivered copies after this many seconds, 30..86400"),
  deliver_at: z
    .string()
    .optional()
    .describe(
      "Deliver later: RFC 3339 time with offset, at most 7 days ahead; not with delay_seconds",
    ),
  delay_seconds: z
    .number()
    .int()
    .min(1)
    .max(604800)
    .optional()
    .describe("Deliver after this many seconds, 1..604800; not with deliver_at"),
  require_ack: z
    .boolean()
    .optional()
    .describe("Repeat until a device acknowledges it (see repeat_every_seconds)"),
  repeat_every_seconds: z
    .number()
    .int()
    .min(30)
    .max(86400)
    .optional()
    .describe("With require_ack: seconds between repeats, 30..86400 (default 300)"),
  escalate_after_seconds: z
    .number()
    .int()
    .min(30)
    .max(604800)
    .optional()
    .describe(
      "With require_ack: escalate if unacknowledged after 30..604800 s; needs escalate_to_topic or escalate_to_project",
    ),
  escalate_to_topic: topic.optional(),
  escalate_to_project: z.string().max(100).optional().describe("Project name or id to escalate to"),
  idempotency_key: z
    .string()
    .regex(/^[\x20-\x7e]{1,255}$/)
    .optional()
    .describe(
      "Makes a retried call safe: the same key (1..255 printable ASCII) within 24 h returns the first notification and sends nothing again",
    ),
};

/** The request's own fields (the idempotency key travels as a header). */
export const publishFields = Object.keys(publish).filter((k) => k !== "idempotency_key") as Exclude<
  keyof typeof publish,
  "idempotency_key"
>[];

export const notifyShape = {
  ...publish,
  actions: z
    .array(action)
    .max(3)
    .optional()
    .describe("Up to 3 buttons; read the answer later with get_notification (or use ask)"),
};

export const askShape = {
  ...publish,
  title: publish.title.describe("The question, 1..120 characters (required)"),
  actions: z
    .array(action)
    .min(1)
    .max(3)
    .describe("1..3 buttons the person answers with (required)"),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(86400)
    .optional()
    .describe(
      "How long to wait for the answer, 1..86400 (default 600); the question expires then unless ttl_seconds is given",
    ),
};

export const idShape = {
  id: z.string().uuid().describe("The notification's id, as notify or ask returned it"),
};

export const listShape = {
  topic: topic.optional(),
  page_size: z.number().int().min(1).max(100).optional().describe("1..100, default 20"),
  page_token: z.string().max(512).optional().describe("next_page_token of the previous page"),
};

/** The arguments notify and ask share. */
export type PublishArgs = {
  [K in keyof typeof notifyShape]?: z.infer<(typeof notifyShape)[K]>;
} & { title: string };
