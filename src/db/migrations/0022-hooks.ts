import { Migration } from "@mikro-orm/migrations";

/**
 * Inbound hooks: a project's addresses for senders in their own formats (docs/integrations.md).
 * The secret is sealed like a webhook's (AES-256-GCM under the token key ring, bound to the
 * row): GitHub's HMAC needs it back. A rotation keeps the previous one for 24 hours.
 */
export class Migration0022Hooks extends Migration {
  override name = "0022-hooks";

  up(): void {
    this.addSql(`
      create table hook (
        id uuid primary key,
        project_id uuid not null references project (id) on delete cascade,
        kind text not null,
        name text not null,
        topic text not null default '',
        template jsonb,
        secret_key_id text not null,
        secret_box bytea not null,
        previous_key_id text,
        previous_box bytea,
        previous_until timestamptz,
        created_at timestamptz not null default now()
      );
      create index hook_project on hook (project_id);
    `);
  }
}
