/**
 * Authentication and authorization for every RPC, on every surface: `Authorization: Bearer …`
 * is verified, the principal is put in the context, and the matrix in authz.ts decides.
 */
import type { Interceptor } from "@connectrpc/connect";
import type { CredentialVerifier } from "../../db/repositories/credential-verifier.ts";
import { parseCredential } from "../../domain/credentials.ts";
import { heraldError } from "../../errors.ts";
import { principalKey } from "../../services/context.ts";
import { allows, isPublic, matrix, rpcName } from "../authz.ts";
import { sameOrigin, sessionFrom } from "./session-cookie.ts";

const bearer = /^Bearer +(\S+) *$/i;

function unauthenticated(detail: string) {
  return heraldError("unauthenticated", detail, {
    metadata: { "www-authenticate": 'Bearer realm="herald", error="invalid_token"' },
  });
}

export function createAuthInterceptor(
  credentials: CredentialVerifier,
  publicUrl: string | undefined,
): Interceptor {
  return (next) => async (req) => {
    const grants = matrix[rpcName(req.method)];
    if (grants === undefined) {
      throw heraldError("permission_denied", "this method is not open to any credential");
    }
    // Public calls (sign-up, login) ignore any credential sent along.
    if (isPublic(grants)) return next(req);
    const header = req.header.get("authorization");
    const session = header === null ? sessionFrom(req.header.get("cookie")) : undefined;
    if (session !== undefined) {
      // The console's cookie: the browser sends it with any request to this server, whichever
      // page asks, so only this server's own pages may use it.
      if (!sameOrigin(req.header, publicUrl)) {
        throw heraldError(
          "permission_denied",
          "the console's session works from its own page only",
        );
      }
      const principal = await credentials.verify("cliToken", session);
      if (principal === undefined)
        throw unauthenticated("the console session ended: sign in again");
      req.contextValues.set(principalKey, principal);
      if (!allows(grants, principal)) {
        throw heraldError("permission_denied", "this credential lacks the scope for this call");
      }
      return next(req);
    }
    if (header === null) {
      throw heraldError("unauthenticated", "missing credential: send Authorization: Bearer <key>", {
        metadata: { "www-authenticate": 'Bearer realm="herald"' },
      });
    }
    const secret = bearer.exec(header)?.[1];
    const kind = secret === undefined ? undefined : parseCredential(secret);
    if (secret === undefined || kind === undefined) {
      throw unauthenticated("malformed credential: expected Authorization: Bearer hk_… or hc_…");
    }
    const principal = await credentials.verify(kind, secret);
    if (principal === undefined) {
      throw unauthenticated("unknown or revoked credential");
    }
    req.contextValues.set(principalKey, principal);
    if (!allows(grants, principal)) {
      throw heraldError("permission_denied", "this credential lacks the scope for this call");
    }
    return next(req);
  };
}
