/**
 * Per-request values of the transport: the request id, and what a REST call carries beside its
 * RPC. (Who calls and from where, which use cases read too, are in services/context.ts.)
 */
import type { Message } from "@bufbuild/protobuf";
import { createContextKey } from "@connectrpc/connect";
import type { FieldViolation } from "../errors.ts";

/** A short id that ties a response to its log line; echoed as `request-id` and in problems. */
export const requestIdKey = createContextKey<string>("", { description: "request id" });

/**
 * What a REST call carries beside the RPC: input problems found while transcoding (reported by
 * the validation interceptor, after authentication, together with the proto's own rules), and
 * the handler's result as the REST capture interceptor saw it.
 */
export interface RestExchange {
  decodeViolations: FieldViolation[];
  /** The handler's response message, captured before Connect serialises it. */
  response?: Message;
  /** The error the call ended with, as the outermost interceptor (the capture) saw it. */
  error?: unknown;
}

export const restExchangeKey = createContextKey<RestExchange | undefined>(undefined, {
  description: "REST transcoding state",
});
