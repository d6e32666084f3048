/**
 * What the use cases read from a call's context: who is calling and from where. Transport
 * (src/server/) fills these in; services only read them, and know nothing of HTTP.
 */
import { createContextKey } from "@connectrpc/connect";
import type { Principal } from "../domain/principal.ts";

/** The client's network address (after trusted proxies), for per-address limits. */
export const clientAddressKey = createContextKey<string>("", { description: "client address" });

/** The authenticated caller, set by authentication before any handler runs. */
export const principalKey = createContextKey<Principal | undefined>(undefined, {
  description: "the authenticated caller",
});

/**
 * What a call did to the web console's session: a session started (its secret) or ended.
 * Transport turns it into a cookie; the secret never appears in a response body.
 */
export interface SessionChange {
  started?: string;
  ended?: boolean;
}

export const sessionChangeKey = createContextKey<SessionChange | undefined>(undefined, {
  description: "the console session's change",
});

/**
 * What a call says about itself beside its message, read by the transport from the request
 * (its headers, however the protocol carries them) and typed here, so that no use case reads
 * HTTP: the project a CLI token or console session names, the publish's idempotency key, the
 * client's software, and the host it called (links the server hands out are built on it).
 */
export interface CallInfo {
  project: string | undefined;
  idempotencyKey: string | undefined;
  userAgent: string;
  host: string | undefined;
}

export const callKey = createContextKey<CallInfo>(
  { project: undefined, idempotencyKey: undefined, userAgent: "", host: undefined },
  { description: "what the call says about itself" },
);
