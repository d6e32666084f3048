/**
 * VAPID keys: HERALD_VAPID_PUBLIC_KEY / HERALD_VAPID_PRIVATE_KEY when set, otherwise a pair
 * generated once into the data directory (mode 0600). Browsers subscribe with the public key.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import webpush from "web-push";
import type { VapidKeys } from "./web-push.ts";

export function loadVapidKeys(env: Record<string, string | undefined>, dataDir: string): VapidKeys {
  const subject = env.HERALD_VAPID_SUBJECT || "mailto:owner@localhost";
  if (env.HERALD_VAPID_PUBLIC_KEY && env.HERALD_VAPID_PRIVATE_KEY) {
    return {
      publicKey: env.HERALD_VAPID_PUBLIC_KEY,
      privateKey: env.HERALD_VAPID_PRIVATE_KEY,
      subject,
    };
  }
  const file = join(dataDir, "vapid.json");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${JSON.stringify(webpush.generateVAPIDKeys(), null, 2)}\n`, {
      mode: 0o600,
    });
  }
  chmodSync(file, 0o600);
  const keys = JSON.parse(readFileSync(file, "utf8")) as { publicKey: string; privateKey: string };
  return { ...keys, subject };
}
