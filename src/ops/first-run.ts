/** What `npm start` tells a person: the first start's key and setup link, and start-up notes. */
import type { Config } from "../config.ts";
import type { Bootstrapped } from "./bootstrap.ts";
import { setupUrl } from "./urls.ts";

/**
 * The first start's account, key and setup link, said once: when every process serves, or as a
 * start `stoppedEarly` (failed, or stopped, after making them and before it served) ends: they
 * stay for the next start, which is no first start and would not say them.
 */
export function firstRunMessage(
  boot: Bootstrapped,
  base: string,
  config: Config,
  stoppedEarly = false,
): string {
  const setup = boot.setupToken
    ? `Set the owner's password (${config.owner.email}) in the console with this one-time link,\n` +
      `valid 24 hours (npm run owner:reset-password prints a new one):\n\n` +
      `HERALD_OWNER_SETUP_URL=${setupUrl(base, boot.setupToken)}\n\n`
    : "";
  const made = `the owner's account, the project "default" and an API key`;
  const key = `The key is shown this once; store it now:\n\nHERALD_API_KEY=${boot.apiKey}\n\n${setup}`;
  return stoppedEarly
    ? `\nThis first start created ${made}, and stopped before it served; they stay for the next start.\n${key}`
    : `\nFirst start: created ${made}.\n${key}` +
        `Try it:\n  curl -H "Authorization: Bearer $HERALD_API_KEY" -d '{"title":"Deploy finished","priority":"high"}' ${base}/v1/notify\n\n` +
        signupLine(config);
}

function signupLine(config: Config): string {
  return config.signupEnabled
    ? "Sign-up is open: anyone who reaches this server can create an account (HERALD_SIGNUP=0 closes it).\n"
    : "Sign-up is closed: only the owner signs in (HERALD_SIGNUP=1 opens it to anyone who reaches this server).\n";
}

/**
 * HERALD_OWNER_PASSWORD counts only when the owner is created: say why it was not used instead of
 * ignoring it (a later start, or an external database without HERALD_BOOTSTRAP=1).
 */
export function ownerPasswordIgnored(bootstrapped: boolean): string {
  return bootstrapped
    ? "HERALD_OWNER_PASSWORD is used at the first start only and was ignored; to set a new owner password, run: npm run owner:reset-password\n"
    : "HERALD_OWNER_PASSWORD was ignored: with DATABASE_URL, the owner is created only with HERALD_BOOTSTRAP=1 (on an empty database)\n";
}

/** Which push platforms this server can reach, in words, said once at start. */
export function platformStatus(config: Pick<Config, "apns" | "fcmServiceAccountFile">): string {
  const ready = ["Web Push"];
  const missing: string[] = [];
  (config.apns ? ready : missing).push("iOS (APNs)");
  (config.fcmServiceAccountFile ? ready : missing).push("Android (FCM)");
  const list = (names: string[]) =>
    names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : names[0];
  return missing.length === 0
    ? `Push: ${list(ready)} ready`
    : `Push: ${list(ready)} ready; ${list(missing)} not configured (docs/delivery.md says how)`;
}
