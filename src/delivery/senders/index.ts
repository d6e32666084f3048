/**
 * The senders of this process, built from the environment. A platform without configuration
 * gets a sender that fails its deliveries with the reason, and is reported at start.
 */
import { readFileSync } from "node:fs";
import { createApnsSender } from "./apns.ts";
import { createFcmSender } from "./fcm.ts";
import { type Sender, unconfiguredSender } from "./sender.ts";
import { loadVapidKeys } from "./vapid.ts";
import { createWebPushSender } from "./web-push.ts";

export function sendersFromEnv(env: Record<string, string | undefined>, dataDir: string): Sender[] {
  const apns =
    env.HERALD_APNS_KEY_FILE &&
    env.HERALD_APNS_KEY_ID &&
    env.HERALD_APNS_TEAM_ID &&
    env.HERALD_APNS_BUNDLE_ID
      ? createApnsSender({
          signingKey: readFileSync(env.HERALD_APNS_KEY_FILE, "utf8"),
          keyId: env.HERALD_APNS_KEY_ID,
          teamId: env.HERALD_APNS_TEAM_ID,
          bundleId: env.HERALD_APNS_BUNDLE_ID,
          sandbox: env.HERALD_APNS_ENV === "sandbox",
        })
      : unconfiguredSender(
          "ios",
          "APNs is not configured: set HERALD_APNS_KEY_FILE, HERALD_APNS_KEY_ID, HERALD_APNS_TEAM_ID and HERALD_APNS_BUNDLE_ID",
        );
  const fcm = env.HERALD_FCM_SERVICE_ACCOUNT_FILE
    ? createFcmSender({ serviceAccountFile: env.HERALD_FCM_SERVICE_ACCOUNT_FILE })
    : unconfiguredSender("android", "FCM is not configured: set HERALD_FCM_SERVICE_ACCOUNT_FILE");
  return [apns, fcm, createWebPushSender({ vapid: loadVapidKeys(env, dataDir) })];
}
