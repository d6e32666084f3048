/**
 * Web Push: VAPID-signed (vapid.ts, once an hour per push service), aes128gcm-encrypted and sent
 * by web-push-request.ts, with TTL (remaining lifetime), Urgency (priority) and Topic (the
 * collapse id: a retried push replaces the first).
 */
import type { Log } from "../../domain/log.ts";
import { fitPreview, type Preview } from "../../domain/payload.ts";
import { webPushUrgency } from "../../domain/priority.ts";
import { refusedSubject } from "../../domain/vapid-subject.ts";
import { publicOnlyLookup } from "./push-address.ts";
import { PushServices } from "./push-services.ts";
import { type PushMessage, retryAfterMs, type Sender, type SendResult } from "./sender.ts";
import { type VapidKeys, vapidAuthorization } from "./vapid.ts";
import { WebPushEncryptor } from "./web-push-encryptor.ts";
import { type PushServiceError, postPush, type Subscription } from "./web-push-request.ts";

/** The push service accepts about 4 KiB of ciphertext; ~3993 bytes of plaintext fit. */
export const webPushPlaintextLimit = 3900;

export interface WebPushOptions {
  vapid: VapidKeys;
  /** A CA to trust besides the system's (a test's push service). */
  ca?: string;
  /** Push services may be at private addresses (tests, an in-house service); else public only. */
  allowPrivate?: boolean;
  timeoutMs?: number;
  /** Where the encryption thread's start and failures are told (web-push-encryptor.ts). */
  log?: Log;
}

export function webPushPayload(msg: PushMessage): string {
  if (msg.kind === "clear") return JSON.stringify({ type: "clear", id: msg.notificationId });
  const encode = (p: Preview) =>
    JSON.stringify({
      id: p.id,
      topic: p.topic,
      title: p.title,
      message: p.message,
      truncated: p.truncated,
      priority: msg.priority,
      click_url: msg.click_url,
      // The service worker shows it in place of the earlier one with this tag.
      ...(msg.collapseId ? { tag: msg.collapseId } : {}),
      // Quiet hours: the service worker shows it silently.
      ...(msg.quiet ? { quiet: true } : {}),
      // The service worker shows an Acknowledge button, or the actions as buttons.
      ...(msg.awaitsAck ? { require_ack: true } : {}),
      ...(msg.actions?.length ? { actions: msg.actions } : {}),
    });
  const preview = fitPreview(
    { id: msg.notificationId, topic: msg.topic, title: msg.title, message: msg.message },
    webPushPlaintextLimit,
    encode,
  );
  return encode(preview);
}

/** A UUID as a Topic header: at most 32 characters of the URL-safe base64 alphabet. */
export const collapseTopic = (id: string) => id.replaceAll("-", "");

export function createWebPushSender(opts: WebPushOptions): Sender {
  const services = new PushServices({
    timeoutMs: opts.timeoutMs ?? 10_000,
    ...(opts.ca && { ca: opts.ca }),
    ...(!opts.allowPrivate && { lookup: publicOnlyLookup }),
  });
  const authorization = vapidAuthorization(opts.vapid);
  // What a refusal of the JWT most likely means: Apple's refuses a subject nobody can reach.
  const why = refusedSubject(opts.vapid.subject)
    ? `: its VAPID subject, ${opts.vapid.subject}, is no contact a push service can reach, and Apple's refuses it; set HERALD_PUBLIC_URL to Herald's https:// address, or HERALD_VAPID_SUBJECT`
    : ": check the VAPID configuration";
  const encryptor = new WebPushEncryptor(opts.log);
  return {
    platform: "web",
    publicKey: opts.vapid.publicKey,
    async send(msg, token): Promise<SendResult> {
      const subscription = JSON.parse(token) as Subscription;
      const ttl = Math.max(0, Math.floor((msg.expiresAt.getTime() - Date.now()) / 1000));
      let body: Buffer;
      try {
        body = await encryptor.encrypt(subscription.keys, webPushPayload(msg));
      } catch (err) {
        return { kind: "permanent", reason: `web push: ${(err as Error).message}` };
      }
      try {
        await postPush(subscription.endpoint, body, {
          ttl,
          urgency: webPushUrgency(msg.quiet ? "low" : msg.priority),
          topic: msg.collapseId ?? collapseTopic(msg.notificationId),
          // Signed here, once an hour per push service.
          authorization: authorization(subscription.endpoint),
          services,
        });
        return { kind: "ok" };
      } catch (err) {
        const e = err as Partial<PushServiceError>;
        const status = e.statusCode;
        // What a network failure says stays here: the account sees a generic reason, so an
        // endpoint cannot be used to learn what answers on the server's network.
        if (status === undefined)
          return { kind: "retry", reason: "web push: the push service could not be reached" };
        if (status === 404 || status === 410) {
          return { kind: "dead_token", reason: `web push subscription gone (HTTP ${status})` };
        }
        if (status === 429 || status >= 500) {
          const after = retryAfterMs(e.headers?.["retry-after"]);
          return {
            kind: "retry",
            reason: `web push HTTP ${status}`,
            ...(after !== undefined ? { retryAfterMs: after } : {}),
          };
        }
        if (status === 400 || status === 401 || status === 403) {
          return {
            kind: "permanent",
            reason: `web push rejected our request (HTTP ${status})${why}`,
          };
        }
        return { kind: "permanent", reason: `web push HTTP ${status}` };
      }
    },
    close: async () => {
      await encryptor.close();
      await services.close();
    },
  };
}
