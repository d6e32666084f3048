/**
 * The senders of this process, built from the configuration. A platform without configuration
 * gets a sender that fails its deliveries with the reason, and is reported at start.
 */
import { readFileSync } from "node:fs";
import type { Config } from "../../config.ts";
import type { Log } from "../../domain/log.ts";
import { loadVapidKeys } from "../../ops/vapid-keys.ts";
import { type Sender, unconfiguredSender } from "./sender.ts";
import { createWebPushSender } from "./web-push.ts";

/**
 * APNs and FCM load their libraries only when configured: firebase-admin alone is tens of MB
 * that a server without Android devices never needs.
 */
export async function createSenders(config: Config, log?: Log): Promise<Sender[]> {
  const { apns } = config;
  const { createApnsSender } = apns ? await import("./apns.ts") : { createApnsSender: undefined };
  const { createFcmSender } = config.fcmServiceAccountFile
    ? await import("./fcm.ts")
    : { createFcmSender: undefined };
  return [
    apns && createApnsSender
      ? createApnsSender({
          signingKey: readFileSync(apns.keyFile, "utf8"),
          keyId: apns.keyId,
          teamId: apns.teamId,
          bundleId: apns.bundleId,
          sandbox: apns.sandbox,
        })
      : unconfiguredSender(
          "ios",
          "APNs is not configured: set HERALD_APNS_KEY_FILE, HERALD_APNS_KEY_ID, HERALD_APNS_TEAM_ID and HERALD_APNS_BUNDLE_ID",
        ),
    config.fcmServiceAccountFile && createFcmSender
      ? createFcmSender({ serviceAccountFile: config.fcmServiceAccountFile })
      : unconfiguredSender("android", "FCM is not configured: set HERALD_FCM_SERVICE_ACCOUNT_FILE"),
    createWebPushSender({
      vapid: loadVapidKeys(config),
      allowPrivate: config.webPushAllowPrivate,
      ...(log && { log }),
    }),
  ];
}
