/**
 * `npm run accept-new-keys`: makes this machine's keys the database's (ops/key-check.ts), when
 * the keys the database's push tokens and secrets were sealed with are lost for good. What was
 * sealed with them stays unreadable: the devices it belonged to must register again, and those
 * webhooks' and hooks' secrets be rotated. Run it on the machine whose keys are to stay; copy
 * its keys to the others.
 */
import { loadConfig } from "../config.ts";
import { withDatabase } from "./database.ts";
import { settleMachineKeys } from "./key-check.ts";

const config = loadConfig();
await withDatabase(config, (orm) => settleMachineKeys(orm, config, true));
process.stdout.write(
  [
    "This machine's keys are now the database's; Herald starts with them.",
    "What was sealed with the keys before cannot be opened: phones and browsers registered",
    "before must sign in again (their pushes fail with the reason meanwhile), and webhooks'",
    "and inbound hooks' secrets made before must be rotated (herald webhooks rotate, herald",
    "hooks rotate). Give the other machines on this database these keys.",
    "",
  ].join("\n"),
);
