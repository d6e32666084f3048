import { Migration } from "@mikro-orm/migrations";

/**
 * Which keys this database's sealed data belongs to (ops/key-check.ts): a one-way verifier of
 * each push-token key (by id), of the blind-index key, and the VAPID public key, recorded by
 * the first start that uses them, so a machine with other keys is refused at start instead of
 * sealing with them.
 */
export class Migration0026KeyChecks extends Migration {
  override name = "0026-key-checks";

  up(): void {
    this.addSql(`
      create table key_check (
        purpose text not null check (purpose in ('token', 'index', 'vapid')),
        key_id text not null default '',
        verifier text not null,
        recorded_at timestamptz not null default now(),
        primary key (purpose, key_id)
      );
    `);
  }
}
