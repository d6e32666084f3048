/**
 * Email in: a message to an `email` hook's address becomes a notification. The subject is the
 * title, the text body the message, the message's own priority (X-Priority, Importance) the
 * priority, and its Message-ID makes a sender's retry of the same message send once.
 *
 * The address carries the hook and its secret, lowercase so that no mail system's case folding
 * breaks it: `<hook id without dashes>.<secret without hks_>@<host>` (59 characters before the
 * `@`, within SMTP's 64).
 */
import { clip, type HookCall, type HookOutcome, objectBody, type Priority, text } from "./event.ts";

/** A parsed message, as the intake gives it (services/hook-intake.ts parses the MIME). */
export interface MailBody {
  subject: string;
  text: string;
  priority: Priority;
  messageId: string;
}

export function readEmail(call: HookCall): HookOutcome {
  const mail = objectBody(call.body);
  const priority = text(mail, "priority");
  return {
    publish: {
      title: clip(text(mail, "subject") || "(no subject)", "title"),
      message: clip(text(mail, "text"), "message"),
      priority: priority === "high" || priority === "low" ? priority : "normal",
      dedupe: text(mail, "messageId") || undefined,
    },
  };
}

/**
 * The domain of the addresses: the operator's (HERALD_SMTP_DOMAIN), else the host Herald is
 * reached at; an IP address is no mail domain many clients take (Python's strict address parser
 * refuses `[127.0.0.1]`), so then `localhost`. The listener takes any domain: only the local
 * part names the hook.
 */
export function mailDomainOf(host: string, configured: string | undefined): string {
  if (configured) return configured;
  const name = host.replace(/^\[|\]$/g, "");
  return /^[\d.]+$/.test(name) || name.includes(":") ? "localhost" : name;
}

export function emailAddress(hookId: string, secret: string, domain: string): string {
  return `${hookId.replaceAll("-", "")}.${secret.replace(/^hks_/, "")}@${domain}`;
}

/** The hook and the secret a recipient address names, whatever its domain; or undefined. */
export function emailRecipient(address: string): { hookId: string; secret: string } | undefined {
  const m = /^([0-9a-f]{32})\.([a-z2-7]{26})@/i.exec(address.trim());
  if (!m) return undefined;
  const hex = (m[1] as string).toLowerCase();
  const hookId = [
    hex.slice(0, 8),
    hex.slice(8, 12),
    hex.slice(12, 16),
    hex.slice(16, 20),
    hex.slice(20),
  ].join("-");
  return { hookId, secret: `hks_${(m[2] as string).toLowerCase()}` };
}
