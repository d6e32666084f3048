/**
 * `npm run owner:reset-password` (its older name: `owner:setup-link`): a new one-time link
 * (24 hours) to set the owner's password, for the operator who lost it or never set it. Earlier
 * unused links stop working. The owner is HERALD_OWNER_EMAIL's account, or the first account of
 * the server.
 */
import { loadConfig } from "../config.ts";
import { AccountRepository, SetupLinkRepository } from "../db/index.ts";
import { withDatabase } from "./database.ts";
import { baseUrlOf, setupUrl } from "./urls.ts";

const config = loadConfig();
await withDatabase(config, async (orm) => {
  const accounts = new AccountRepository(orm);
  const owner = await accounts.owner(config.owner.email);
  if (!owner) {
    process.stderr.write("no account yet: npm start creates the owner's at its first start\n");
    process.exitCode = 1;
    return;
  }
  const token = await new SetupLinkRepository(orm).create(owner.id);
  process.stdout.write(
    `A new link to set the password of ${owner.email} (valid 24 hours, once):\n\n` +
      `HERALD_OWNER_SETUP_URL=${setupUrl(baseUrlOf(config), token)}\n`,
  );
});
