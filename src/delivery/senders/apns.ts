/**
 * APNs with the `apns2` library: token auth (ES256 provider token), priority and interruption
 * level from the notification's priority, `apns-expiration` from the remaining lifetime, and the
 * notification id as `apns-collapse-id`, so a retried push replaces the first (or its replace
 * key's tag, so that it replaces the earlier notification with the same key).
 */
import { ApnsClient, ApnsError, Notification, SilentNotification } from "apns2";
import { fitPreview, type Preview } from "../../domain/payload.ts";
import { apnsPriority } from "../../domain/priority.ts";
import { H2Origin, type H2Request, type H2Response } from "./h2-origin.ts";
import { type PushMessage, retryAfterMs, type Sender, type SendResult } from "./sender.ts";

/** The category of a notification with actions (a question). */
export const questionCategory = "HERALD_QUESTION";

/** APNs refuses payloads over 4096 bytes. */
export const apnsPayloadLimit = 4096;

export interface ApnsOptions {
  teamId: string;
  keyId: string;
  /** The `.p8` key (PKCS#8 PEM, P-256). */
  signingKey: string;
  /** The app's bundle id: the `apns-topic`. */
  bundleId: string;
  sandbox: boolean;
  /** Another origin than Apple's (a relay, or a test server), and the CA to trust for it. */
  endpoint?: { origin: string; ca?: string };
}

const deadReasons = new Set(["Unregistered", "BadDeviceToken"]);
/** Reasons that say our key, team, or bundle id (the topic) is wrong, not the device's token. */
const configReasons: Record<string, string> = {
  DeviceTokenNotForTopic: "the token belongs to another app: check HERALD_APNS_BUNDLE_ID",
  TopicDisallowed: "the key may not push to this topic: check HERALD_APNS_BUNDLE_ID",
  BadTopic: "check HERALD_APNS_BUNDLE_ID",
  MissingTopic: "check HERALD_APNS_BUNDLE_ID",
  BadCertificateEnvironment: "check HERALD_APNS_ENV (sandbox or production)",
  BadEnvironmentKeyInToken: "check HERALD_APNS_ENV (sandbox or production)",
  // Only after a new token was refused too (send's retry): Apple's clock is an hour ahead.
  ExpiredProviderToken:
    "APNs read a new provider token as over an hour old: check this machine's clock",
};
const retryStatuses = new Set([429, 500, 503]);

/** A clear: a background push the app answers by removing the shown notification. */
function buildClear(msg: PushMessage, token: string, bundleId: string): Notification {
  return new SilentNotification(token, {
    topic: bundleId,
    expiration: Math.floor(msg.expiresAt.getTime() / 1000),
    data: { type: "clear", id: msg.notificationId },
  });
}

function build(msg: PushMessage, token: string, bundleId: string, preview: Preview): Notification {
  if (msg.kind === "clear") return buildClear(msg, token, bundleId);
  // Quiet hours: shown without a sound or a lit screen.
  const { priority, interruptionLevel } = apnsPriority(msg.quiet ? "low" : msg.priority);
  return new Notification(token, {
    alert: { title: preview.title, body: preview.message },
    priority: priority as 5 | 10,
    expiration: Math.floor(msg.expiresAt.getTime() / 1000),
    collapseId: msg.collapseId ?? msg.notificationId,
    topic: bundleId,
    aps: {
      "interruption-level": interruptionLevel,
      "mutable-content": 1,
      // The app's notification service extension registers this category's buttons from
      // `actions` before the notification shows (docs/delivery.md).
      ...(msg.actions?.length ? { category: questionCategory } : {}),
    },
    data: {
      id: preview.id,
      topic: preview.topic,
      truncated: preview.truncated,
      ...(msg.click_url ? { click_url: msg.click_url } : {}),
      ...(msg.actions?.length ? { actions: msg.actions } : {}),
    },
  });
}

/**
 * The connections apns2 sends through (h2-origin.ts, in place of its undici pool), keeping the
 * `Retry-After` of refused pushes (apns2's error carries only the status and reason) until the
 * sender asks for it, by token and collapse id.
 */
class RetryAfterOrigin extends H2Origin {
  readonly #retryAfter = new Map<string, string>();

  override async request(req: H2Request): Promise<H2Response> {
    const res = await super.request(req);
    const value = res.headers["retry-after"];
    if (res.statusCode !== 200 && typeof value === "string") {
      this.#retryAfter.set(`${req.path} ${req.headers["apns-collapse-id"]}`, value);
    }
    return res;
  }

  /**
   * The Retry-After of the last refused push to this token under this collapse id (the one sent:
   * a replace key's tag, or none for a clear), once.
   */
  takeRetryAfter(token: string, collapseId: string | undefined): string | undefined {
    const key = `/3/device/${encodeURIComponent(token)} ${collapseId}`;
    const value = this.#retryAfter.get(key);
    this.#retryAfter.delete(key);
    return value;
  }
}

export function createApnsSender(opts: ApnsOptions): Sender {
  const host = opts.sandbox ? "api.sandbox.push.apple.com" : "api.push.apple.com";
  const client = new ApnsClient({
    team: opts.teamId,
    keyId: opts.keyId,
    signingKey: opts.signingKey,
    defaultTopic: opts.bundleId,
    host,
  });
  // apns2's own pool sends one request at a time per connection (undici's `pipelining: 1` holds
  // for HTTP/2 too), 32 at once in all. Ours multiplexes: a few connections, up to 100 streams
  // each (or fewer, if APNs' SETTINGS say so), so a fan-out is not sent 32 pushes at a time.
  // It also lets another origin be chosen (apns2 only takes a host, on port 443). Apple asks
  // providers to keep connections open across notifications: they stay open until APNs closes
  // them.
  const origin = opts.endpoint?.origin ?? `https://${host}:443`;
  const pool = new RetryAfterOrigin(origin, opts.endpoint?.ca ? { ca: opts.endpoint.ca } : {});
  // apns2 made an undici pool of its own; it never connected (connections open on first use).
  void (client as unknown as { client: { close(): Promise<void> } }).client.close();
  (client as unknown as { client: H2Origin }).client = pool;
  return {
    platform: "ios",
    async send(msg, token): Promise<SendResult> {
      // The notification measured for the preview that fits is the one sent: built once.
      let measured: { p: Preview; n: Notification } | undefined;
      const preview = fitPreview(
        { id: msg.notificationId, topic: msg.topic, title: msg.title, message: msg.message },
        apnsPayloadLimit,
        (p) => {
          measured = { p, n: build(msg, token, opts.bundleId, p) };
          return JSON.stringify(measured.n.buildApnsOptions());
        },
      );
      const built = measured?.p === preview ? measured.n : undefined;
      const notification = built ?? build(msg, token, opts.bundleId, preview);
      try {
        await client.send(notification).catch((err: unknown) => {
          // apns2 keeps its provider token 55 minutes by the wall clock, so one stepped back
          // (or behind Apple's) sends it past its hour. apns2 drops it on this answer: sent
          // once more, with a new one, the push is not lost.
          if (err instanceof ApnsError && err.reason === "ExpiredProviderToken") {
            return client.send(notification);
          }
          throw err;
        });
        return { kind: "ok" };
      } catch (err) {
        if (!(err instanceof ApnsError)) {
          return { kind: "retry", reason: `APNs: ${(err as Error).message}` };
        }
        const why = `APNs ${err.statusCode} ${err.reason}`;
        const sentAs = notification.options.collapseId;
        const after = retryAfterMs(pool.takeRetryAfter(token, sentAs));
        if (deadReasons.has(err.reason)) return { kind: "dead_token", reason: why };
        if (retryStatuses.has(err.statusCode)) {
          return {
            kind: "retry",
            reason: why,
            ...(after !== undefined ? { retryAfterMs: after } : {}),
          };
        }
        const config = configReasons[err.reason];
        if (config) return { kind: "misconfigured", reason: `${why}: ${config}` };
        if (err.statusCode === 403) {
          return {
            kind: "misconfigured",
            reason: `${why}: check the APNs key, key id and team id`,
          };
        }
        return { kind: "permanent", reason: why };
      }
    },
    close: () => client.close(),
  };
}
