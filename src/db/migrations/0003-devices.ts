import { Migration } from "@mikro-orm/migrations";

/** Devices with encrypted push tokens, and pairing codes for signing phones in. */
export class Migration0003Devices extends Migration {
  override name = "0003-devices";

  up(): void {
    this.addSql(`
      create table device (
        id uuid primary key,
        account_id uuid not null references account (id) on delete cascade,
        name text not null,
        platform text not null,
        credential_digest bytea not null unique,
        credential_prefix text not null,
        token_key_id text,
        token_box bytea,
        token_index bytea,
        token_last4 text not null default '',
        topics text[] not null default '{}',
        enabled boolean not null default true,
        disabled_reason text not null default '',
        created_at timestamptz not null default now(),
        last_seen_at timestamptz,
        signed_out_at timestamptz
      );
      create index device_account on device (account_id, id desc);
      create unique index device_token_index on device (token_index)
        where token_index is not null and signed_out_at is null;

      create table pairing_code (
        code text primary key,
        account_id uuid not null references account (id) on delete cascade,
        expires_at timestamptz not null,
        used_at timestamptz
      );
    `);
  }
}
