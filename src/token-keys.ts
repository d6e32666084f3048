/**
 * Where the token key ring comes from: HERALD_TOKEN_KEYS and HERALD_TOKEN_INDEX_KEY when set
 * (production: from your secret store); otherwise a file in the data directory, generated on
 * first use with mode 0600.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateKeyMaterial, parseKeyList, TokenKeyRing } from "./domain/token-crypto.ts";

export function loadTokenKeyRing(
  env: Record<string, string | undefined>,
  dataDir: string,
): { ring: TokenKeyRing; source: string } {
  if (env.HERALD_TOKEN_KEYS) {
    if (!env.HERALD_TOKEN_INDEX_KEY) {
      throw new Error("HERALD_TOKEN_KEYS is set but HERALD_TOKEN_INDEX_KEY is not");
    }
    return {
      ring: new TokenKeyRing(
        parseKeyList(env.HERALD_TOKEN_KEYS),
        Buffer.from(env.HERALD_TOKEN_INDEX_KEY, "base64"),
      ),
      source: "HERALD_TOKEN_KEYS",
    };
  }
  const file = join(dataDir, "token-keys.json");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${JSON.stringify(generateKeyMaterial(), null, 2)}\n`, { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  const saved = JSON.parse(readFileSync(file, "utf8")) as { keys: string; indexKey: string };
  return {
    ring: new TokenKeyRing(parseKeyList(saved.keys), Buffer.from(saved.indexKey, "base64")),
    source: file,
  };
}
