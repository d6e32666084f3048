/**
 * FCM with `firebase-admin` (HTTP v1 API): a data + notification message with Android priority
 * from the notification's priority, `ttl` from the remaining lifetime, and the notification id as
 * the collapse key, so a retried push replaces the first.
 */
import { randomUUID } from "node:crypto";
import type { ClientHttp2Session } from "node:http2";
import type { Agent } from "node:https";
import type { Duplex } from "node:stream";
import type { ConnectionOptions } from "node:tls";
import { type App, deleteApp, initializeApp } from "firebase-admin/app";
import { getMessaging, type Message } from "firebase-admin/messaging";
import { fitPreview, type Preview } from "../../domain/payload.ts";
import { fcmPriority } from "../../domain/priority.ts";
import { RenewableCredential } from "./fcm-credential.ts";
import { H2Origin } from "./h2-origin.ts";
import {
  type PushMessage,
  providerAgent,
  retryAfterMs,
  type Sender,
  type SendResult,
} from "./sender.ts";

/** FCM refuses messages whose payload exceeds 4096 bytes. */
export const fcmPayloadLimit = 4096;

export interface FcmOptions {
  /** Path of the service account key JSON. */
  serviceAccountFile: string;
  /**
   * Transport for the OAuth token (HTTP/1.1), and the TLS connections the sends' HTTP/2
   * sessions open through its `createConnection` (a test's agent leads both to a fake).
   */
  agent?: Agent;
}

const fcmHost = "fcm.googleapis.com";

interface RequestClient {
  send(request: object): Promise<unknown>;
}

/**
 * The session as firebase-admin's HTTP/2 client uses it (`request` alone), with the `:scheme`
 * it sends corrected: it sends the URL's protocol, "https:", which RFC 9113 §8.3.1 does not
 * allow (a scheme has no colon) and nghttp2 refuses with PROTOCOL_ERROR.
 */
function schemeFixed(session: ClientHttp2Session): Pick<ClientHttp2Session, "request"> {
  return {
    request: (headers, options) => session.request({ ...headers, ":scheme": "https" }, options),
  };
}

/**
 * `messaging.send()` goes through firebase-admin's HTTP/1.1 client (node:https, a connection per
 * request in flight); its HTTP/2 client serves only `sendEach`, on
 * a session of its own per call. Here `send()` uses the HTTP/2 client on the streams of a few
 * kept connections (h2-origin.ts), as the APNs sender does. Validation, the OAuth token, retries
 * and the mapping of FCM's errors stay firebase-admin's.
 */
function sendOverHttp2(messaging: object, pool: H2Origin): void {
  const handler = (
    messaging as {
      messagingRequestHandler: { httpClient: RequestClient; http2Client: RequestClient };
    }
  ).messagingRequestHandler;
  const http2Client = handler.http2Client;
  handler.httpClient = {
    send: (request) =>
      pool.use((session) =>
        http2Client.send({ ...request, http2SessionHandler: { session: schemeFixed(session) } }),
      ),
  };
}

const deadCodes = new Set([
  "messaging/registration-token-not-registered",
  "messaging/invalid-registration-token",
]);
const retryCodes = new Set([
  "messaging/message-rate-exceeded",
  "messaging/device-message-rate-exceeded",
  "messaging/internal-error",
  "messaging/server-unavailable",
  "messaging/unknown-error",
]);

function build(msg: PushMessage, token: string, preview: Preview): Message {
  if (msg.kind === "clear") {
    // A data message the app answers by removing the shown notification.
    return {
      token,
      data: { type: "clear", id: msg.notificationId },
      android: { priority: "normal", ttl: Math.max(0, msg.expiresAt.getTime() - Date.now()) },
    };
  }
  // Android shows no buttons for FCM's notification part, and shows it without the app when in
  // the background: a question goes as data only, and the app builds it with its actions.
  const question = Boolean(msg.actions?.length);
  const tag = msg.collapseId;
  return {
    token,
    ...(question ? {} : { notification: { title: preview.title, body: preview.message } }),
    data: {
      id: preview.id,
      topic: preview.topic,
      truncated: String(preview.truncated),
      ...(msg.click_url ? { click_url: msg.click_url } : {}),
      // A question is built by the app: it shows it under the tag itself, quietly if so.
      ...(question && tag && { tag }),
      ...(msg.quiet && { quiet: "true" }),
      ...(question && {
        title: preview.title,
        message: preview.message,
        actions: JSON.stringify(msg.actions),
      }),
    },
    android: {
      // Quiet hours: delivered without waking the device, shown at low priority, no sound.
      priority: msg.quiet ? "normal" : fcmPriority(msg.priority),
      ttl: Math.max(0, msg.expiresAt.getTime() - Date.now()),
      collapseKey: tag ?? msg.notificationId,
      // Shown in place of the earlier notification with the same replace key.
      ...(!question &&
        (tag || msg.quiet) && {
          notification: {
            ...(tag && { tag }),
            // Quiet hours: low in the shade, no sound.
            ...(msg.quiet && { priority: "low" as const, defaultSound: false }),
          },
        }),
    },
  };
}

/** Google's token service failed us, not our credential: unreachable, or its own 429 or 5xx. */
function tokenServiceDown(code: string, cause: unknown): boolean {
  if (code !== "app/invalid-credential" || cause === undefined) return false;
  const status = (cause as { response?: { status?: number } }).response?.status;
  return status === undefined || status === 429 || status >= 500;
}

/**
 * FCM refused the OAuth access token itself (401 UNAUTHENTICATED with no FCM error code; FCM's
 * THIRD_PARTY_AUTH_ERROR, also a 401, is about the app's APNs or Web Push credentials).
 */
function accessTokenRefused(err: unknown): boolean {
  const res = (err as { httpResponse?: { status?: number; data?: unknown } }).httpResponse;
  if (res?.status !== 401) return false;
  const error = (res.data as { error?: { details?: { errorCode?: string }[] } } | undefined)?.error;
  return !error?.details?.some((d) => d.errorCode === "THIRD_PARTY_AUTH_ERROR");
}

/** What a failed send means: firebase-admin's error codes (or a connection's) as an outcome. */
function outcomeOf(err: unknown): SendResult {
  const e = err as {
    code?: string;
    message?: string;
    cause?: unknown;
    httpResponse?: { headers?: Record<string, string | undefined> };
  };
  // A connection that failed before firebase-admin had the stream (h2-origin.ts) has a
  // network code (ECONNREFUSED) or none, never firebase-admin's "service/reason".
  if (!e.code?.includes("/")) return { kind: "retry", reason: "FCM could not be reached" };
  // The reason names no address: what answers where on the server's network stays here.
  if (tokenServiceDown(e.code, e.cause)) {
    return { kind: "retry", reason: "FCM: Google's OAuth token service could not be reached" };
  }
  const why = `FCM ${e.code}: ${e.message ?? ""}`.trim();
  if (deadCodes.has(e.code)) return { kind: "dead_token", reason: why };
  if (e.code === "messaging/invalid-argument" && /token/i.test(e.message ?? "")) {
    return { kind: "dead_token", reason: why };
  }
  if (retryCodes.has(e.code) || e.code.startsWith("app/network")) {
    const after = retryAfterMs(e.httpResponse?.headers?.["retry-after"]);
    return { kind: "retry", reason: why, ...(after !== undefined ? { retryAfterMs: after } : {}) };
  }
  if (e.code === "messaging/mismatched-credential") {
    // SENDER_ID_MISMATCH: the token was issued to another Firebase project than ours.
    return {
      kind: "misconfigured",
      reason: `${why}: the token belongs to another Firebase project; check the FCM service account`,
    };
  }
  if (
    e.code === "messaging/third-party-auth-error" ||
    e.code.startsWith("app/invalid-credential")
  ) {
    return { kind: "misconfigured", reason: `${why}: check the FCM service account` };
  }
  return { kind: "permanent", reason: why };
}

export function createFcmSender(opts: FcmOptions): Sender {
  const agent = opts.agent ?? providerAgent();
  const credential = new RenewableCredential(opts.serviceAccountFile, agent);
  const app: App = initializeApp(
    { credential, projectId: credential.projectId, httpAgent: agent },
    `herald-fcm-${randomUUID()}`,
  );
  const messaging = getMessaging(app);
  const open = agent.createConnection.bind(agent) as (o: ConnectionOptions) => Duplex;
  const pool = new H2Origin(`https://${fcmHost}`, {
    connect: () =>
      open({
        ...agent.options,
        host: fcmHost,
        port: 443,
        servername: fcmHost,
        ALPNProtocols: ["h2"],
      }),
  });
  sendOverHttp2(messaging, pool);
  return {
    platform: "android",
    async send(msg, token): Promise<SendResult> {
      const preview = fitPreview(
        { id: msg.notificationId, topic: msg.topic, title: msg.title, message: msg.message },
        fcmPayloadLimit,
        (p) => {
          const m = build(msg, token, p);
          return JSON.stringify({ notification: m.notification, data: m.data });
        },
      );
      const message = build(msg, token, preview);
      try {
        await messaging.send(message).catch(async (err: unknown) => {
          // The token kept past Google's hour (fcm-credential.ts): sent once more with a new one.
          if (!accessTokenRefused(err)) throw err;
          await credential.renew();
          return messaging.send(message);
        });
        return { kind: "ok" };
      } catch (err) {
        return outcomeOf(err);
      }
    },
    close: async () => {
      await pool.destroy();
      await deleteApp(app);
      if (!opts.agent) agent.destroy();
    },
  };
}
