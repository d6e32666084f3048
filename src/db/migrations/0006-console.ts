import { Migration } from "@mikro-orm/migrations";

/**
 * The web console: its sessions are CLI tokens of kind `session` (listed and revoked with the
 * others), and the owner's one-time setup links (stored as digests, valid 24 hours, once).
 */
export class Migration0006Console extends Migration {
  override name = "0006-console";

  up(): void {
    this.addSql(`
      alter table cli_token add column kind text not null default 'cli';

      create table setup_link (
        digest bytea primary key,
        account_id uuid not null references account (id) on delete cascade,
        expires_at timestamptz not null,
        used_at timestamptz
      );
    `);
  }
}
