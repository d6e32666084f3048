/**
 * What an inbound hook's sender sent, typed (the transport reads it from the HTTP request), and
 * what it becomes: a notification to publish, or nothing, with the reason. Pure: each kind's
 * reading is in its own file (github.ts, gitlab.ts, alert-group.ts, generic.ts).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { NotifyRequestSchema } from "../../../gen/herald/v1/notify_service_pb.ts";

/** A notification's priority. */
export type Priority = "low" | "normal" | "high";

export { type HookKind, hookKinds } from "./kinds.ts";

/** A sender's call, as the transport read it. */
export interface HookCall {
  /** The parsed JSON body. */
  body: unknown;
  /** The body's bytes, as signed. */
  raw: Buffer;
  /** The sender's event name: `X-GitHub-Event`, `X-Gitlab-Event`. */
  event: string | undefined;
  /** The sender's id of this delivery: `X-GitHub-Delivery`, `X-Gitlab-Event-UUID`. */
  delivery: string | undefined;
  /** The client's `Idempotency-Key` (a `generic` sender may send one). */
  idempotencyKey: string | undefined;
}

/**
 * A notification a sender's event becomes: a publish's own fields (NotifyRequest's, not a copy
 * of them: a field the API gains is there for every sender at once; a `topic` replaces the
 * hook's), and what makes a retry of the same event the same publish (hashed into the
 * idempotency key).
 */
export type HookPublish = MessageInitShape<typeof NotifyRequestSchema> & {
  title: string;
  message: string;
  priority: Priority;
  dedupe: string | undefined;
};

export type HookOutcome = { ignored: string } | { publish: HookPublish };

/** A payload the kind cannot read: answered 400, naming what is wrong. */
export class HookPayloadError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

const limits = { title: 120, message: 2048 };

/** Cut to the notification's limits, with an ellipsis where something was cut. */
export function clip(text: string, what: keyof typeof limits): string {
  const max = limits[what];
  const chars = Array.from(text.trim());
  return chars.length <= max ? chars.join("") : `${chars.slice(0, max - 1).join("")}…`;
}

export type Json = Record<string, unknown>;

/** The body as a JSON object, or the 400 that says it is not one. */
export function objectBody(body: unknown): Json {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HookPayloadError("body", "must be a JSON object");
  }
  return body as Json;
}

/** The member at `path` (`a.b.c`) when it is an object, or the 400 naming it. */
export function member(body: Json, path: string): Json {
  let at: unknown = body;
  for (const key of path.split(".")) {
    at = at !== null && typeof at === "object" ? (at as Json)[key] : undefined;
  }
  if (at === null || typeof at !== "object" || Array.isArray(at)) {
    throw new HookPayloadError(path, "is missing or not an object");
  }
  return at as Json;
}

/** A string member (`a.b.c`), or "" when it is absent or not a string. */
export function text(body: Json, path: string): string {
  let at: unknown = body;
  for (const key of path.split(".")) {
    at = at !== null && typeof at === "object" ? (at as Json)[key] : undefined;
  }
  return typeof at === "string" ? at : typeof at === "number" ? String(at) : "";
}

/** A link a notification may carry: http or https, else none. */
export function link(url: string): string | undefined {
  return /^https?:\/\/\S+$/i.test(url) && url.length <= 2048 ? url : undefined;
}
