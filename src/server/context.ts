/** Typed per-request values shared by the interceptors, the REST shim and the handlers. */
import type { Message } from "@bufbuild/protobuf";
import { createContextKey } from "@connectrpc/connect";
import type { FieldViolation } from "../errors.ts";

/** Who is calling, established by the auth interceptor. */
export type Principal =
  | {
      kind: "apiKey";
      credentialId: string;
      accountId: string;
      projectId: string;
      scopes: readonly string[];
    }
  | { kind: "cliToken"; credentialId: string; accountId: string }
  /** A device: `credentialId` is the device's id. */
  | { kind: "device"; credentialId: string; accountId: string };

/** The client's network address (after trusted proxies), for per-address limits. */
export const clientAddressKey = createContextKey<string>("", { description: "client address" });

export const principalKey = createContextKey<Principal | undefined>(undefined, {
  description: "the authenticated caller",
});

/** A short id that ties a response to its log line; echoed as `request-id` and in problems. */
export const requestIdKey = createContextKey<string>("", { description: "request id" });

/**
 * What a REST call carries beside the RPC: input problems found while transcoding (reported by
 * the validation interceptor, after authentication, together with the proto's own rules), and
 * the HTTP status and headers a handler wants on the REST answer (gRPC and Connect always answer
 * 200 on success).
 */
export interface RestExchange {
  decodeViolations: FieldViolation[];
  status?: number;
  headers: Headers;
  /** The handler's response message, captured before Connect serialises it. */
  response?: Message;
  /** The error the call ended with, as the outermost interceptor saw it. */
  error?: unknown;
}

export const restExchangeKey = createContextKey<RestExchange | undefined>(undefined, {
  description: "REST transcoding state",
});
