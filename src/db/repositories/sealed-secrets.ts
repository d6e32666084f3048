/**
 * The secrets sealed under the token key ring besides push tokens: webhook endpoints' signing
 * secrets and inbound hooks' secrets, each the current one and the previous one of a rotation.
 * `npm run reencrypt-tokens` re-seals them under the newest key with the tokens, so that an
 * older key can leave the ring without a webhook or a hook losing its secret. A row is rewritten
 * only if it is still under the key it was read with (a rotation may run meanwhile).
 */
import type { PushTokenKeyRing } from "../../domain/push-token-crypto.ts";
import type { Orm } from "../orm.ts";

/** Each table, the prefix its rows are bound with, and its pairs of key id and sealed box. */
const sealed = [
  { table: "webhook_endpoint", identity: "webhook" },
  { table: "hook", identity: "hook" },
].flatMap((t) =>
  [
    ["secret_key_id", "secret_box"],
    ["previous_key_id", "previous_box"],
  ].map(([keyId, box]) => ({ ...t, keyId: keyId as string, box: box as string })),
);

const batch = 500;

/** Re-seals every such secret not under the newest key; how many were rewritten, and not. */
export async function reencryptSecrets(
  orm: Orm,
  ring: PushTokenKeyRing,
): Promise<{ changed: number; unopenable: number }> {
  const db = orm.em.getConnection();
  const current = ring.current.id;
  let [changed, unopenable] = [0, 0];
  for (const s of sealed) {
    let after = "00000000-0000-0000-0000-000000000000";
    for (;;) {
      const rows = await db.execute<{ id: string; key_id: string; box: Buffer }[]>(
        `select id, ${s.keyId} as key_id, ${s.box} as box from ${s.table}
          where ${s.box} is not null and ${s.keyId} <> ? and id > ? order by id limit ?`,
        [current, after, batch],
      );
      if (rows.length === 0) break;
      after = (rows.at(-1) as { id: string }).id;
      for (const r of rows) {
        const identity = `${s.identity}:${r.id}`;
        let plain: string;
        try {
          plain = ring.open({ keyId: r.key_id, box: r.box }, identity);
        } catch {
          unopenable++; // its key already left the ring: nothing can open it
          continue;
        }
        const next = ring.seal(plain, identity);
        const done = await db.execute<{ id: string }[]>(
          `update ${s.table} set ${s.keyId} = ?, ${s.box} = ? where id = ? and ${s.keyId} = ?
           returning id`,
          [next.keyId, next.box, r.id, r.key_id],
        );
        changed += done.length;
      }
    }
  }
  return { changed, unopenable };
}
