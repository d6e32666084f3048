/**
 * Whether a sender's call carries a secret of its hook, the sender's own way: GitHub signs the
 * body (`X-Hub-Signature-256: sha256=<HMAC-SHA256 hex>`), GitLab sends the secret
 * (`X-Gitlab-Token`), the others send `Authorization: Bearer <secret>`. Compared in constant
 * time; any of the hook's working secrets (the current one, and the previous one for 24 hours
 * after a rotation) will do.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { HookKind } from "./event.ts";

/** What a call presented, as the transport read it. */
export interface HookCredentials {
  /** `X-Hub-Signature-256`. */
  signature: string | undefined;
  /** `X-Gitlab-Token`. */
  token: string | undefined;
  /** The secret of `Authorization: Bearer …`. */
  bearer: string | undefined;
}

const digest = (s: string | Buffer) => createHash("sha256").update(s).digest();
const same = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

function signed(secret: string, raw: Buffer, signature: string): boolean {
  const mac = createHmac("sha256", secret).update(raw).digest("hex");
  return same(`sha256=${mac}`, signature.toLowerCase());
}

export function authentic(
  kind: HookKind,
  secrets: readonly string[],
  presented: HookCredentials,
  raw: Buffer,
): boolean {
  let ok = false;
  // Every secret is tried, whichever matches: the time taken says nothing of which did.
  for (const secret of secrets) {
    if (kind === "github")
      ok = (presented.signature !== undefined && signed(secret, raw, presented.signature)) || ok;
    else if (kind === "gitlab")
      ok = (presented.token !== undefined && same(secret, presented.token)) || ok;
    else ok = (presented.bearer !== undefined && same(secret, presented.bearer)) || ok;
  }
  return ok;
}
