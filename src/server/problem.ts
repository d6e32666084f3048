/**
 * RFC 9457 problem details for REST answers, built from the same errors the RPC surfaces carry,
 * so that REST and RPC clients see the same codes and field violations.
 */

import type { ConnectError } from "@connectrpc/connect";
import { catalogue, type ErrorCode, publicError } from "../errors.ts";

export interface Problem {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Response metadata of an error that a REST client should also see as headers. */
const forwardedHeaders = [
  "www-authenticate",
  "retry-after",
  "ratelimit",
  "ratelimit-policy",
  "request-id",
];

export function problemFor(err: unknown, requestId: string): Problem {
  const pub = publicError(err);
  const headers: Record<string, string> = {};
  const metadata = (err as Partial<ConnectError>)?.metadata;
  if (metadata instanceof Headers) {
    for (const name of forwardedHeaders) {
      const value = metadata.get(name);
      if (value !== null) headers[name] = value;
    }
  }
  if (pub.retryAfterSeconds !== undefined) headers["retry-after"] ??= String(pub.retryAfterSeconds);
  const p = problemOf(pub.code, pub.detail, requestId, pub.violations, headers);
  // A limit's refusal names it, as members a program can read: {"limit": …, "value": …}.
  if (pub.info.limit !== undefined)
    Object.assign(p.body, { limit: pub.info.limit, value: Number(pub.info.value) });
  return p;
}

export function problemOf(
  code: ErrorCode,
  detail: string,
  requestId: string,
  violations: readonly { field: string; message: string }[] = [],
  headers: Record<string, string> = {},
): Problem {
  const entry = catalogue[code];
  const body: Record<string, unknown> = {
    type: `/docs/errors#${code}`,
    title: entry.title,
    status: entry.status,
    detail,
    code,
  };
  if (violations.length > 0) body.errors = violations.map((v) => ({ ...v }));
  body.request_id = requestId;
  if (code === "unauthenticated") headers["www-authenticate"] ??= 'Bearer realm="herald"';
  return { status: entry.status, headers, body };
}
