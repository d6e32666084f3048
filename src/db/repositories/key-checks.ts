/**
 * The keys this database's sealed data belongs to (migration 0026; ops/key-check.ts decides
 * what a difference means). One machine at a time reads them and records what it decided (a
 * transaction under an advisory lock): two machines with different keys starting together on
 * a new database cannot both find it empty.
 */
import type { Db } from "../orm.ts";

export interface KeyCheck {
  purpose: "token" | "index" | "vapid";
  /** The push-token key's id; "" for the others. */
  key_id: string;
  verifier: string;
}

/**
 * Reads the stored checks and gives them to `decide`, which returns the checks to record (those
 * not recorded yet are added; with `replace`, the stored ones go first) or throws (nothing is
 * recorded then).
 */
export function settleKeyChecks(
  db: Db,
  decide: (stored: KeyCheck[]) => { record: readonly KeyCheck[]; replace: boolean },
): Promise<void> {
  return db.transactional(async (trx) => {
    await db.execute("select pg_advisory_xact_lock(hashtext('herald.key-check'))", [], "all", trx);
    const stored = await db.execute<KeyCheck[]>(
      "select purpose, key_id, verifier from key_check order by purpose, key_id",
      [],
      "all",
      trx,
    );
    const { record, replace } = decide(stored);
    if (replace) await db.execute("delete from key_check", [], "all", trx);
    await db.execute(
      `insert into key_check (purpose, key_id, verifier)
       select purpose, key_id, verifier from json_to_recordset(?::json)
           as c(purpose text, key_id text, verifier text)
       on conflict (purpose, key_id) do nothing`,
      [JSON.stringify(record)],
      "all",
      trx,
    );
  });
}
