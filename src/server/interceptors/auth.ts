/**
 * Authentication and authorization for every RPC, on every surface: `Authorization: Bearer …`
 * is verified, the principal is put in the context, and the matrix in authz.ts decides.
 */
import type { Interceptor } from "@connectrpc/connect";
import type { CredentialVerifier } from "../../db/index.ts";
import {
  type CredentialKind,
  credentialProblem,
  parseCredential,
} from "../../domain/credentials.ts";
import type { FailedAuthThrottle } from "../../domain/failed-auth.ts";
import type { Principal } from "../../domain/principal.ts";
import { heraldError, publicError } from "../../errors.ts";
import { clientAddressKey, principalKey } from "../../services/context.ts";
import { addressThrottled } from "../../services/password-auth.ts";
import { allows, type Grant, isPublic, matrix, rpcName } from "../authz.ts";
import { sameOrigin, sessionFrom } from "./session-cookie.ts";

const bearer = /^Bearer +(\S+) *$/i;

/** The secret of an `Authorization: Bearer …` header, if it is one. */
export const bearerSecret = (authorization: string | null | undefined) =>
  bearer.exec(authorization ?? "")?.[1];

function unauthenticated(detail: string) {
  return heraldError("unauthenticated", detail, {
    metadata: { "www-authenticate": 'Bearer realm="herald", error="invalid_token"' },
  });
}

export function createAuthInterceptor(
  credentials: CredentialVerifier,
  publicUrl: string | undefined,
  failures: FailedAuthThrottle,
): Interceptor {
  return (next) => async (req) => {
    const grants = matrix[rpcName(req.method)];
    if (grants === undefined) {
      throw heraldError("permission_denied", "this method is not open to any credential");
    }
    // Public calls (sign-up, login) ignore any credential sent along.
    if (isPublic(grants)) return next(req);
    // A caller this server authenticated itself (an inbound hook's sender, server/hooks/):
    // only the matrix decides. No client can set a context value.
    const established = req.contextValues.get(principalKey);
    if (established) {
      if (!allows(grants, established)) throw refused(grants, established);
      return next(req);
    }
    // A throttled address is answered from memory, before any lookup.
    const address = req.contextValues.get(clientAddressKey);
    const wait = failures.blockedFor(address);
    if (wait !== undefined) throw addressThrottled(wait);
    const principal = await verified(credentials, req.header, publicUrl).catch(async (err) => {
      // A credential was presented and is wrong (a call with none is not a failed attempt).
      const presented = req.header.has("authorization") || sessionFrom(req.header.get("cookie"));
      if (presented && publicError(err).code === "unauthenticated") await failures.failed(address);
      throw err;
    });
    req.contextValues.set(principalKey, principal);
    if (!allows(grants, principal)) throw refused(grants, principal);
    return next(req);
  };
}

async function verified(
  credentials: CredentialVerifier,
  header: Headers,
  publicUrl: string | undefined,
): Promise<Principal> {
  const presented = presentedCredential(header, publicUrl);
  const principal = await credentials.verify(presented.kind, presented.secret);
  if (principal === undefined) throw unauthenticated(presented.unknown);
  return principal;
}

/**
 * The credential a call presents: `Authorization: Bearer …`, or else the console's session
 * cookie (the browser sends it with any request to this server, whichever page asks, so only
 * this server's own pages may use it). With what to say if it is unknown.
 */
function presentedCredential(
  header: Headers,
  publicUrl: string | undefined,
): { kind: CredentialKind; secret: string; unknown: string } {
  const authorization = header.get("authorization");
  const session = authorization === null ? sessionFrom(header.get("cookie")) : undefined;
  if (session !== undefined) {
    if (!sameOrigin(header, publicUrl)) {
      throw heraldError("permission_denied", "the console's session works from its own page only");
    }
    return {
      kind: "cliToken",
      secret: session,
      unknown: "the console session ended: sign in again",
    };
  }
  if (authorization === null) {
    throw heraldError("unauthenticated", "missing credential: send Authorization: Bearer <key>", {
      metadata: { "www-authenticate": 'Bearer realm="herald"' },
    });
  }
  const secret = bearerSecret(authorization);
  const kind = secret === undefined ? undefined : parseCredential(secret);
  if (secret === undefined || kind === undefined) {
    throw unauthenticated(
      secret !== undefined && credentialProblem(secret) === "checksum"
        ? "the credential's checksum does not match: a typo, or a copy cut short"
        : "malformed credential: expected Authorization: Bearer hk_… or hc_…",
    );
  }
  const unknown =
    kind === "cliToken"
      ? "unknown, expired or revoked credential (a password change or reset revokes the account's CLI tokens)"
      : "unknown, expired or revoked credential";
  return { kind, secret, unknown };
}

/** Why a valid credential may not make this call, and what would. */
function refused(grants: readonly Grant[], principal: Principal) {
  const scope = grants.find((g) => g.kind === "apiKey")?.scope;
  const detail =
    principal.kind === "apiKey" && scope
      ? `this API key lacks the \`${scope}\` scope this call needs: use a key with it (herald keys create NAME --scope ${scope}) or a CLI token (herald login)`
      : principal.kind === "apiKey"
        ? "API keys may not make this call: sign in as the owner (herald login) and use the CLI token"
        : principal.kind === "device"
          ? "a device credential can only receive and manage its own device"
          : "a CLI token may not make this call: it is for devices (sign in a device)";
  return heraldError("permission_denied", detail);
}
