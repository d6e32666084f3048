/**
 * A sender's call to an inbound hook: the hook found, the sender authenticated its own way,
 * its payload read by the hook's kind (domain/hooks/), and what it becomes: nothing (an event
 * the kind ignores), or one publish for the transport to make through Notify, as the hook's
 * principal, with an idempotency key from the sender's own id of the event.
 *
 * An unknown hook and a wrong credential are one answer (`refused`): nothing tells them apart.
 * The payload is read only once the sender is authenticated.
 */
import { createHash } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import type { HookRepository } from "../db/index.ts";
import {
  authentic,
  emailRecipient,
  type HookCall,
  type HookCredentials,
  type HookKind,
  HookPayloadError,
  type MailBody,
  readHookCall,
} from "../domain/hooks/index.ts";
import type { Log } from "../domain/log.ts";
import { hookPrincipal } from "../domain/principal.ts";
import { heraldError } from "../errors.ts";

/** A sender's call, as the transport read it from the HTTP request. */
export interface HookRequest {
  hookId: string;
  raw: Buffer;
  contentType: string;
  event: string | undefined;
  delivery: string | undefined;
  idempotencyKey: string | undefined;
  credentials: HookCredentials;
}

export type HookIntake =
  | { kind: "refused" }
  | { kind: "ignored"; reason: string }
  | {
      kind: "publish";
      principal: ReturnType<typeof hookPrincipal>;
      request: MessageInitShape<typeof NotifyRequestSchema>;
      idempotencyKey: string | undefined;
    };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The body as JSON: as sent, or in GitHub's form encoding (`payload=<JSON>`). A form-encoded
 * body without that field is read as JSON too (`curl -d '{…}'` says form, sends JSON).
 */
function bodyOf(raw: Buffer, contentType: string): unknown {
  let text = raw.toString("utf8");
  if (/^application\/x-www-form-urlencoded/i.test(contentType) && text.startsWith("payload=")) {
    text = new URLSearchParams(text).get("payload") ?? "";
  }
  if (text.trim() === "") throw new HookPayloadError("body", "is empty: a JSON body is expected");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HookPayloadError("body", `is not JSON: ${(err as Error).message}`);
  }
}

/** A message's parts an `email` hook reads (MIME decoded: encoded subjects, HTML-only bodies). */
async function mailOf(raw: Buffer): Promise<MailBody> {
  // Loaded on the first mail: a process that takes no email never holds MIME's tables.
  const { simpleParser } = await import("mailparser");
  try {
    const mail = await simpleParser(raw, { skipImageLinks: true, skipTextLinks: true });
    const priority = mail.headers.get("priority");
    return {
      subject: mail.subject ?? "",
      text: mail.text ?? "",
      priority: priority === "high" || priority === "low" ? priority : "normal",
      messageId: mail.messageId ?? "",
    };
  } catch (err) {
    throw new HookPayloadError("message", `is not a readable email: ${(err as Error).message}`);
  }
}

/** What a mail presents: the secret its recipient address carries, as a bearer secret. */
export const mailCredentials = (secret: string): HookCredentials => ({
  signature: undefined,
  token: undefined,
  bearer: secret,
});

/** Per hook, so that two hooks of a project never share a key; bounded, printable. */
function idempotencyKeyOf(hookId: string, dedupe: string | undefined): string | undefined {
  if (dedupe === undefined || dedupe === "") return undefined;
  return `hook:${hookId}:${createHash("sha256").update(dedupe).digest("base64url")}`;
}

export function createHookIntake(deps: { hooks: HookRepository; log: Log }) {
  /** The hook, when it exists and the credentials are one of its working secrets. */
  const authenticated = async (hookId: string, credentials: HookCredentials, raw: Buffer) => {
    const hook = uuid.test(hookId) ? await deps.hooks.called(hookId) : undefined;
    if (!hook) return undefined;
    if (hook.unopened > 0) {
      deps.log.error({ hook: hook.id }, "a hook's secret is sealed with a key not in the ring");
    }
    return authentic(hook.kind as HookKind, hook.secrets, credentials, raw) ? hook : undefined;
  };
  /** Whether a recipient address names an `email` hook with its secret (SMTP's RCPT TO). */
  const accepts = async (address: string): Promise<boolean> => {
    const named = emailRecipient(address);
    if (!named) return false;
    const hook = await authenticated(named.hookId, mailCredentials(named.secret), Buffer.alloc(0));
    return hook?.kind === "email";
  };
  const receive = async (req: HookRequest): Promise<HookIntake> => {
    const hook = await authenticated(req.hookId, req.credentials, req.raw);
    if (!hook) return { kind: "refused" };
    const kind = hook.kind as HookKind;
    let outcome: ReturnType<typeof readHookCall>;
    try {
      const call: HookCall = {
        body: kind === "email" ? await mailOf(req.raw) : bodyOf(req.raw, req.contentType),
        raw: req.raw,
        event: req.event,
        delivery: req.delivery,
        idempotencyKey: req.idempotencyKey,
      };
      outcome = readHookCall(kind, call, hook.template);
    } catch (err) {
      if (!(err instanceof HookPayloadError)) throw err;
      throw heraldError("invalid_argument", `invalid ${kind} payload: ${err.field}`, {
        violations: [{ field: err.field, message: err.message }],
      });
    }
    if ("ignored" in outcome) return { kind: "ignored", reason: outcome.ignored };
    const { dedupe, ...request } = outcome.publish;
    return {
      kind: "publish",
      principal: hookPrincipal(hook),
      idempotencyKey: idempotencyKeyOf(hook.id, dedupe),
      request: { ...request, topic: request.topic ?? hook.topic },
    };
  };
  return { accepts, receive };
}

export type HookIntakes = ReturnType<typeof createHookIntake>;
