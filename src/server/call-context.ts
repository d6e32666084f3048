/**
 * The context a call starts with, read from its HTTP request once, here: the request id, the
 * client's address, the console session it may change, and what it says about itself
 * (services/context.ts, `CallInfo`). RPC and REST calls alike; no use case reads a header.
 */
import type { IncomingHttpHeaders } from "node:http";
import { type ContextValues, createContextValues } from "@connectrpc/connect";
import { callKey, clientAddressKey, sessionChangeKey } from "../services/context.ts";
import { requestIdKey } from "./context.ts";

/** An HTTP request as a call sees it: Fastify's, or an HTTP/2 stream's (grpc/h2-unary.ts). */
export interface CallRequest {
  id: string;
  /** The client's address (server/options.ts, `clientAddressOf`). */
  ip: string | undefined;
  headers: IncomingHttpHeaders;
}

function header(req: CallRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

export function callContextValues(req: CallRequest): ContextValues {
  return createContextValues()
    .set(requestIdKey, req.id)
    .set(clientAddressKey, req.ip ?? "")
    .set(sessionChangeKey, {})
    .set(callKey, {
      project: header(req, "herald-project") || undefined,
      idempotencyKey: header(req, "idempotency-key"),
      userAgent: header(req, "user-agent") ?? "",
      host: header(req, "host") ?? header(req, ":authority"),
    });
}

/** The context of a mail received by the SMTP listener (server/hooks/smtp.ts). */
export function mailContextValues(session: string, address: string): ContextValues {
  return createContextValues()
    .set(requestIdKey, `smtp_${session}`)
    .set(clientAddressKey, address)
    .set(sessionChangeKey, {})
    .set(callKey, {
      project: undefined,
      idempotencyKey: undefined,
      userAgent: "smtp",
      host: undefined,
    });
}
