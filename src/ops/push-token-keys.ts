/**
 * Where the push-token key ring comes from: HERALD_TOKEN_KEYS and HERALD_TOKEN_INDEX_KEY when
 * set (production: from your secret store); otherwise a file in the data directory, generated
 * on first use with mode 0600.
 */
import type { Config } from "../config.ts";
import {
  generateKeyMaterial,
  PushTokenKeyRing,
  parseKeyList,
} from "../domain/push-token-crypto.ts";
import { readOrCreateSecretFile } from "./secret-file.ts";

export function loadPushTokenKeys(config: Pick<Config, "pushTokenKeys" | "dataDir">): {
  ring: PushTokenKeyRing;
  source: string;
} {
  const ring = (m: { keys: string; indexKey: string }) =>
    new PushTokenKeyRing(parseKeyList(m.keys), Buffer.from(m.indexKey, "base64"));
  if (config.pushTokenKeys)
    return { ring: ring(config.pushTokenKeys), source: "HERALD_TOKEN_KEYS" };
  const { file, value } = readOrCreateSecretFile(
    config.dataDir,
    "token-keys.json",
    generateKeyMaterial,
  );
  return { ring: ring(value), source: file };
}
