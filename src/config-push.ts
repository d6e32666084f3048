/**
 * The push providers' settings (APNs, FCM's is a file, Web Push's keys, hosts and subject) and
 * the push-token keys: parsers loadConfig (config.ts) applies, as config-parse.ts's, each
 * throwing with the variable's name when a value is unusable.
 */
import { createECDH } from "node:crypto";
import { isIP } from "node:net";
import type { Config } from "./config.ts";
import type { Env } from "./config-parse.ts";
import { defaultPushHosts } from "./domain/push-endpoint.ts";
import { parseKeyList } from "./domain/push-token-crypto.ts";
import { subjectHost, unreachableHost } from "./domain/vapid-subject.ts";

/** How a 32-byte key is made, for the messages below. */
const makeKey = "base64 of 32 random bytes: openssl rand -base64 32";

/**
 * The push-token key ring from the environment, or undefined (a file in the data directory).
 * Each key is 32 bytes: a shorter one stopped the start with "token keys must be 32 bytes",
 * which named no setting.
 */
export function pushTokenKeys(env: Env): Config["pushTokenKeys"] {
  if (!env.HERALD_TOKEN_KEYS) return undefined;
  if (!env.HERALD_TOKEN_INDEX_KEY) {
    throw new Error("HERALD_TOKEN_KEYS is set but HERALD_TOKEN_INDEX_KEY is not");
  }
  for (const { id, key } of parseKeyList(env.HERALD_TOKEN_KEYS)) {
    if (key.length !== 32) {
      throw new Error(`HERALD_TOKEN_KEYS: key ${id} is ${key.length} bytes, not 32 (${makeKey})`);
    }
  }
  const index = Buffer.from(env.HERALD_TOKEN_INDEX_KEY, "base64").length;
  if (index !== 32) {
    throw new Error(`HERALD_TOKEN_INDEX_KEY is ${index} bytes, not 32 (${makeKey})`);
  }
  return { keys: env.HERALD_TOKEN_KEYS, indexKey: env.HERALD_TOKEN_INDEX_KEY };
}

/** Whether the two are a P-256 key pair in base64url, the public key the private one's. */
function isVapidPair(publicKey: string, privateKey: string): boolean {
  try {
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(Buffer.from(privateKey, "base64url"));
    return ecdh.getPublicKey().equals(Buffer.from(publicKey, "base64url"));
  } catch {
    return false;
  }
}

/**
 * Web Push's VAPID keys from the environment, both or neither (neither: a pair is made in the
 * data directory). One alone was passed over for a new pair without a word, and a pair that
 * did not match signed every push with a key its `k=` did not name (every push service refuses).
 */
export function vapidKeys(env: Env): Config["vapid"] {
  const [publicKey, privateKey] = [env.HERALD_VAPID_PUBLIC_KEY, env.HERALD_VAPID_PRIVATE_KEY];
  if (!publicKey && !privateKey) return undefined;
  if (!publicKey || !privateKey) {
    throw new Error(
      "HERALD_VAPID_PUBLIC_KEY and HERALD_VAPID_PRIVATE_KEY are set together, or neither (then a pair is made in the data directory)",
    );
  }
  if (!isVapidPair(publicKey, privateKey)) {
    throw new Error(
      "HERALD_VAPID_PUBLIC_KEY and HERALD_VAPID_PRIVATE_KEY are no P-256 key pair in base64url (npx web-push generate-vapid-keys makes one)",
    );
  }
  return { publicKey, privateKey };
}

/** What APNs needs, all four or none. */
const apnsSettings = [
  "HERALD_APNS_KEY_FILE",
  "HERALD_APNS_KEY_ID",
  "HERALD_APNS_TEAM_ID",
  "HERALD_APNS_BUNDLE_ID",
] as const;

/**
 * APNs: its four settings together, or none (three of four said only "not configured"); and
 * its environment, `production` or `sandbox`, with `development` taken for sandbox, as Xcode's
 * `aps-environment` says it (read as production, it made every development build's push fail
 * with BadDeviceToken, which Herald takes for a dead token).
 */
export function apns(env: Env): Config["apns"] {
  const where = env.HERALD_APNS_ENV || "production";
  if (!["production", "sandbox", "development"].includes(where)) {
    throw new Error(
      `HERALD_APNS_ENV is "${where}": production (App Store and TestFlight builds, the default) or sandbox (development builds)`,
    );
  }
  const missing = apnsSettings.filter((name) => !env[name]);
  if (missing.length === apnsSettings.length) return undefined;
  if (missing.length > 0) {
    throw new Error(`APNs needs ${missing.join(" and ")} too (docs/delivery.md)`);
  }
  const set = (name: (typeof apnsSettings)[number]) => env[name] as string;
  return {
    keyFile: set("HERALD_APNS_KEY_FILE"),
    keyId: set("HERALD_APNS_KEY_ID"),
    teamId: set("HERALD_APNS_TEAM_ID"),
    bundleId: set("HERALD_APNS_BUNDLE_ID"),
    sandbox: where !== "production",
  };
}

/** A host name (or `*.` and one) or an IP address (IPv6 with or without brackets): no scheme, port or path. */
const hostEntry = (h: string) =>
  /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i.test(h) || isIP(h.replace(/^\[|\]$/g, "")) !== 0;

/**
 * The hosts Web Push endpoints may point to: the public push services and HERALD_WEB_PUSH_HOSTS.
 * An entry with a scheme or a port matched no endpoint, and every registration to it was
 * refused as "not a push service".
 */
export function webPushHosts(env: Env): string[] {
  const extra = (env.HERALD_WEB_PUSH_HOSTS ?? "").split(",").map((h) => h.trim());
  const hosts = extra.filter((h) => h !== "");
  const bad = hosts.find((h) => !hostEntry(h));
  if (bad !== undefined) {
    throw new Error(
      `HERALD_WEB_PUSH_HOSTS has "${bad}", which is no host name: hosts alone, as push.example.com or *.example.com`,
    );
  }
  return [...defaultPushHosts, ...hosts];
}

/**
 * Web Push's VAPID subject: HERALD_VAPID_SUBJECT, a `mailto:` or `https:` contact; else the
 * public URL when it is `https:` on a name the push services can reach (Apple's refuses the
 * fallback, `mailto:owner@localhost`: docs/decisions.md, "The VAPID subject"). The owner's
 * email is never sent to the push services unless set here.
 */
export function vapidSubject(env: Env, publicUrl: string | undefined): string {
  const set = env.HERALD_VAPID_SUBJECT;
  if (set) {
    if (subjectHost(set) === undefined) {
      throw new Error(
        `HERALD_VAPID_SUBJECT is "${set}": Web Push asks for a mailto: address or an https: URL, as mailto:ops@example.com`,
      );
    }
    return set;
  }
  const url = publicUrl === undefined ? undefined : new URL(publicUrl);
  return url?.protocol === "https:" && !unreachableHost(url.hostname)
    ? url.origin
    : "mailto:owner@localhost";
}
