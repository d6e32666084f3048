/**
 * One narrow interface for every push provider. A sender turns a provider's answer into one of
 * four outcomes; provider SDK errors never leave the sender.
 */
import { Agent, type AgentOptions } from "node:https";
import type { StoredAction } from "../../domain/actions.ts";
import type { Shown } from "../../domain/notification.ts";

/**
 * HTTP/1.1 connections kept per origin: a Web Push service without HTTP/2 (push-services.ts),
 * and Google's OAuth token service (FCM's agent). A fan-out to thousands of devices then reuses
 * a few dozen kept-alive connections instead of opening one TLS session per push (measured:
 * 600 new handshakes held a 1,000-device fan-out ~0.9 s). HTTP/2 origins use h2-origin.ts.
 */
export const providerSocketsPerOrigin = 32;

/**
 * FCM's HTTPS agent: it carries firebase-admin's OAuth token requests (kept alive, a bounded
 * number per origin), and its `createConnection` opens the TLS sockets of FCM's HTTP/2
 * connections (fcm.ts).
 */
export function providerAgent(opts: AgentOptions = {}): Agent {
  return new Agent({ keepAlive: true, maxSockets: providerSocketsPerOrigin, ...opts });
}
/** What a sender pushes: the notification's shown fields (domain/notification.ts) and more. */
export interface PushMessage extends Shown {
  /** `clear`: close the notification on the device (a background push); otherwise show it. */
  kind?: "show" | "clear";
  notificationId: string;
  /**
   * What devices collapse it under, when not its id: a replace key's tag (replaceTagOf), so
   * that it takes the place of the earlier one with the same key.
   */
  collapseId?: string | undefined;
  /**
   * It arrives during the device's quiet hours (and is not `high`): shown silently (APNs
   * passive, FCM low priority, Web Push silent).
   */
  quiet?: boolean;
  /** It asks the person to acknowledge it (and nobody has yet). */
  awaitsAck?: boolean;
  /** Its buttons, while nobody answered: shown as the platform allows (docs/delivery.md). */
  actions?: StoredAction[] | undefined;
  /** The provider must drop the push after this instant (remaining lifetime at send time). */
  expiresAt: Date;
  /** True when the notification has a ttl; without one, providers keep it up to 24 h. */
  hasTtl: boolean;
}

export type SendResult =
  | { kind: "ok" }
  /** Try again later (provider 429/5xx/timeout); not before `retryAfterMs` if given. */
  | { kind: "retry"; reason: string; retryAfterMs?: number }
  /** The token or subscription is gone: disable the device. */
  | { kind: "dead_token"; reason: string }
  /** Will never succeed as is (the request is wrong for this device). */
  | { kind: "permanent"; reason: string }
  /**
   * The server's own configuration is wrong (APNs key or bundle id, Firebase project or service
   * account): fails this send, logged loudly, and keeps the device; one mistake would otherwise
   * disable every device of the platform.
   */
  | { kind: "misconfigured"; reason: string };

export interface Sender {
  readonly platform: "ios" | "android" | "web";
  /** Undefined when ready; otherwise why the platform cannot send (reported at start). */
  readonly unconfigured?: string;
  /** Web Push: the VAPID public key browsers subscribe with. */
  readonly publicKey?: string;
  send(message: PushMessage, token: string): Promise<SendResult>;
  close(): Promise<void>;
}

/** The sender of a platform that has no configuration: every delivery fails, saying why. */
export function unconfiguredSender(platform: Sender["platform"], why: string): Sender {
  return {
    platform,
    unconfigured: why,
    send: async () => ({ kind: "permanent", reason: why }),
    close: async () => {},
  };
}

/** Seconds of a `Retry-After` header value (delta-seconds or HTTP date) as milliseconds. */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * One send, answered within `ms`: a send not answered in time, or a sender that throws, counts
 * as a retryable failure (the worker keeps `ms` well under its claim lease).
 */
export async function sendWithin(
  sender: Sender,
  message: PushMessage,
  token: string,
  ms: number,
  log: { warn(obj: object, msg: string): void },
): Promise<SendResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "retry", reason: `no answer in ${ms} ms` }), ms);
  });
  const sent = sender.send(message, token).catch((err: unknown): SendResult => {
    log.warn({ err, platform: sender.platform }, "sender threw");
    return { kind: "retry", reason: "sender error" };
  });
  try {
    return await Promise.race([sent, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
