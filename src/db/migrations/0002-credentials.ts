import { Migration } from "@mikro-orm/migrations";

/** CLI tokens, device logins (RFC 8628) and the account's plan. */
export class Migration0002Credentials extends Migration {
  override name = "0002-credentials";

  up(): void {
    this.addSql(`
      alter table account add column plan text not null default 'free';

      create table cli_token (
        id uuid primary key,
        account_id uuid not null references account (id) on delete cascade,
        name text not null,
        secret_digest bytea not null unique,
        display_prefix text not null,
        created_at timestamptz not null default now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      create index cli_token_account on cli_token (account_id, id desc);

      create table device_login (
        id uuid primary key,
        device_code_digest bytea not null unique,
        user_code text not null unique,
        token_name text not null,
        status text not null default 'pending',
        account_id uuid references account (id) on delete cascade,
        interval_seconds integer not null,
        last_polled_at timestamptz,
        expires_at timestamptz not null,
        created_at timestamptz not null default now()
      );
      create index device_login_expires on device_login (expires_at);
    `);
  }
}
