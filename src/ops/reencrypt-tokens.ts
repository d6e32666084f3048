/**
 * `npm run reencrypt-tokens`: re-seals every stored push token under the newest key of the
 * push-token key ring (after adding a key in front of HERALD_TOKEN_KEYS). Safe to run while the
 * server runs: each row is rewritten only if it is still under the key it was read with.
 */
import { loadConfig } from "../config.ts";
import { DeviceRepository } from "../db/index.ts";
import { withDatabase } from "./database.ts";
import { loadPushTokenKeys } from "./push-token-keys.ts";

const config = loadConfig();
await withDatabase(config, async (orm) => {
  const { ring } = loadPushTokenKeys(config);
  const changed = await new DeviceRepository(orm, ring).reencryptAll();
  process.stdout.write(`re-encrypted ${changed} push token(s) under key ${ring.current.id}\n`);
});
