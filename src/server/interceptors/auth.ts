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

const bearer = /^Bearer +(\S+) *$/i;

function unauthenticated(detail: string) {
  return heraldError("unauthenticated", detail, {
    metadata: { "www-authenticate": 'Bearer realm="herald", error="invalid_token"' },
  });
}

export function createAuthInterceptor(credentials: CredentialVerifier): Interceptor {
  return (next) => async (req) => {
    const grants = matrix[rpcName(req.method)];
    if (grants === undefined) {
      throw heraldError("permission_denied", "this method is not open to any credential");
    }
    // Public calls (sign-up, login) ignore any credential sent along.
    if (isPublic(grants)) return next(req);
    const header = req.header.get("authorization");
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
