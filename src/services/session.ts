/**
 * Console sessions as the use cases see them: a CLI token of kind `session`, named after the
 * browser it signed in from, whose secret is handed to transport (a cookie), never to the page.
 */
import type { HandlerContext } from "@connectrpc/connect";
import { heraldError } from "../errors.ts";
import { callKey, sessionChangeKey } from "./context.ts";

/** Hands a new session's secret to transport. */
export function startSession(ctx: HandlerContext, secret: string): void {
  const change = ctx.values.get(sessionChangeKey);
  if (!change) throw heraldError("failed_precondition", "sessions are for the web console");
  change.started = secret;
}

export function endSession(ctx: HandlerContext): void {
  const change = ctx.values.get(sessionChangeKey);
  if (change) change.ended = true;
}

/** "Console: Chrome on Linux", from the User-Agent, for the session list. */
export function consoleName(ctx: HandlerContext): string {
  const ua = ctx.values.get(callKey).userAgent;
  const browser =
    ["Edg", "Firefox", "Chrome", "Safari"].find((b) => ua.includes(`${b}/`)) ?? "a browser";
  const os = ["Android", "iPhone", "iPad", "Mac OS X", "Windows", "Linux"].find((o) =>
    ua.includes(o),
  );
  const name = { Edg: "Edge", "Mac OS X": "macOS" } as Record<string, string>;
  return `Console: ${name[browser] ?? browser}${os ? ` on ${name[os] ?? os}` : ""}`;
}
