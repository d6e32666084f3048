/**
 * VAPID keys: HERALD_VAPID_PUBLIC_KEY / HERALD_VAPID_PRIVATE_KEY when set, otherwise a pair
 * generated once into the data directory (mode 0600). Browsers subscribe with the public key.
 */
import type { Config } from "../config.ts";
import { generateVapidKeys, type VapidKeys } from "../delivery/senders/vapid.ts";
import { readOrCreateSecretFile } from "./secret-file.ts";

export function loadVapidKeys(
  config: Pick<Config, "vapid" | "vapidSubject" | "dataDir">,
): VapidKeys {
  const keys =
    config.vapid ?? readOrCreateSecretFile(config.dataDir, "vapid.json", generateVapidKeys).value;
  return { publicKey: keys.publicKey, privateKey: keys.privateKey, subject: config.vapidSubject };
}
