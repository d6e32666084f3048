/**
 * The keys of this machine against the database's (docs/operations.md, "Keys"). Push tokens,
 * webhook signing secrets and inbound hook secrets are sealed with the push-token key ring,
 * found with its blind-index key, and browsers subscribe to the VAPID public key. A second
 * machine started on the same database with keys of its own (its own data directory, or one
 * whose key files were lost) used to make new ones and seal with them: each machine then
 * failed to open what the other sealed (pushes failed, webhooks went unsigned, hooks refused
 * their senders), without a word at start.
 *
 * So the first start records which keys it uses (one-way verifiers, never the keys), and each
 * start after compares: a key id the database knows with other material, an index key or a
 * VAPID key that differs, or a ring that shares no key with the database's, stops the start
 * with what to do. Keys added in front of the ring (a rotation) are recorded as they come; keys
 * dropped from it after `npm run reencrypt-tokens` are not missed. `npm run accept-new-keys`
 * records this machine's keys in place of the database's, for keys lost for good.
 */
import type { Config } from "../config.ts";
import { type KeyCheck, type Orm, settleKeyChecks } from "../db/index.ts";
import type { PushTokenKeyRing } from "../domain/push-token-crypto.ts";
import { loadPushTokenKeys } from "./push-token-keys.ts";
import { loadVapidKeys } from "./vapid-keys.ts";

type KeyConfig = Pick<Config, "pushTokenKeys" | "vapid" | "vapidSubject" | "dataDir">;

/**
 * Loads this machine's keys (generating the files of those not given, once) and holds them to
 * the database's: throws with what to do when they differ; records them when they are new. With
 * `accept`, records them in place of the database's whatever they were.
 */
export async function settleMachineKeys(
  orm: Orm,
  config: KeyConfig,
  accept = false,
): Promise<void> {
  const ours = machineKeyChecks(loadPushTokenKeys(config).ring, loadVapidKeys(config).publicKey);
  await settleKeyChecks(orm.em.getConnection(), (stored) => {
    const difference = accept ? undefined : keyDifference(stored, ours);
    if (difference) throw new Error(keyMismatchMessage(difference, keySources(config)));
    return { record: ours, replace: accept };
  });
}

/** Where this machine's keys come from, and so where the right ones go. */
function keySources(config: KeyConfig): string {
  const files = [
    config.pushTokenKeys ? undefined : "token-keys.json",
    config.vapid ? undefined : "vapid.json",
  ].filter(Boolean);
  const env = [
    config.pushTokenKeys ? "HERALD_TOKEN_KEYS and HERALD_TOKEN_INDEX_KEY" : undefined,
    config.vapid ? "HERALD_VAPID_PUBLIC_KEY and HERALD_VAPID_PRIVATE_KEY" : undefined,
  ].filter(Boolean);
  return [files.length > 0 ? `${files.join(" and ")} in ${config.dataDir}` : undefined, ...env]
    .filter(Boolean)
    .join("; ");
}

/** This machine's checks: its ring's keys, its index key, its VAPID public key. */
export function machineKeyChecks(ring: PushTokenKeyRing, vapidPublicKey: string): KeyCheck[] {
  const v = ring.verifiers();
  return [
    ...v.keys.map((k) => ({ purpose: "token" as const, key_id: k.id, verifier: k.verifier })),
    { purpose: "index", key_id: "", verifier: v.index },
    { purpose: "vapid", key_id: "", verifier: vapidPublicKey },
  ];
}

const keyNames = { index: "the index key", vapid: "the VAPID key" } as const;

/** What differs between the database's checks and this machine's; undefined when they agree. */
export function keyDifference(
  stored: readonly KeyCheck[],
  ours: readonly KeyCheck[],
): string | undefined {
  const storedOf = (c: KeyCheck) =>
    stored.find((s) => s.purpose === c.purpose && s.key_id === c.key_id);
  const differs = ours.filter((c) => {
    const s = storedOf(c);
    return s !== undefined && s.verifier !== c.verifier;
  });
  if (differs.length > 0) {
    return differs
      .map((c) => (c.purpose === "token" ? `token key ${c.key_id}` : keyNames[c.purpose]))
      .join(", ")
      .concat(differs.length === 1 ? " differs" : " differ", " from the database's");
  }
  const storedTokens = stored.filter((s) => s.purpose === "token").map((s) => s.key_id);
  const ourTokens = ours.filter((c) => c.purpose === "token");
  if (storedTokens.length > 0 && !ourTokens.some((c) => storedOf(c))) {
    return `the database's token keys are ${storedTokens.join(", ")}; this machine has ${ourTokens
      .map((c) => c.key_id)
      .join(", ")}`;
  }
  return undefined;
}

/** Why a start stops, in one line, with what to do. */
export function keyMismatchMessage(difference: string, keySources: string): string {
  return (
    `this machine's keys are not the ones this database's push tokens and secrets were sealed with (${difference}): ` +
    `give it the keys of the machine that first used this database (${keySources}); ` +
    "if those are lost for good, `npm run accept-new-keys` makes this machine's keys the database's " +
    '(docs/operations.md, "Keys")'
  );
}
