/**
 * `npm run reencrypt-tokens`: re-seals every stored push token, webhook signing secret and
 * inbound hook secret under the newest key of the push-token key ring (after adding a key in
 * front of HERALD_TOKEN_KEYS). Safe to run while the server runs: each row is rewritten only if
 * it is still under the key it was read with.
 */
import { loadConfig } from "../config.ts";
import { DeviceRepository, reencryptSecrets } from "../db/index.ts";
import { withDatabase } from "./database.ts";
import { loadPushTokenKeys } from "./push-token-keys.ts";

const config = loadConfig();
await withDatabase(config, async (orm) => {
  const { ring } = loadPushTokenKeys(config);
  const changed = await new DeviceRepository(orm, ring).reencryptAll();
  process.stdout.write(`re-encrypted ${changed} push token(s) under key ${ring.current.id}\n`);
  const secrets = await reencryptSecrets(orm, ring);
  process.stdout.write(`re-encrypted ${secrets.changed} webhook and hook secret(s)\n`);
  if (secrets.unopenable > 0) {
    process.stdout.write(
      `${secrets.unopenable} secret(s) are sealed with a key no longer in the ring: rotate those webhooks' and hooks' secrets\n`,
    );
  }
});
