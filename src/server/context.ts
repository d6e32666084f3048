/**
 * Per-request values of the transport: the request id, and what a REST call carries beside its
 * RPC. (Who calls and from where, which use cases read too, are in services/context.ts.)
 */
import { createContextKey } from "@connectrpc/connect";
import type { FieldViolation } from "../errors.ts";

/** A short id that ties a response to its log line; echoed as `request-id` and in problems. */
export const requestIdKey = createContextKey<string>("", { description: "request id" });

/**
 * Input problems a REST call's transcoding found (bad JSON, unknown fields, wrong types): the
 * validation interceptor reports them after authentication, together with the proto's rules.
 * Set only on REST calls, before the call, and only read after.
 */
export const restDecodeKey = createContextKey<readonly FieldViolation[] | undefined>(undefined, {
  description: "REST decoding problems",
});
