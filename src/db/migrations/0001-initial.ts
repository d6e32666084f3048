import { Migration } from "@mikro-orm/migrations";

/**
 * Accounts, projects, API keys, notifications and idempotency records: what publishing needs.
 * Migrations are forward-only: a later change is a new migration, never an edit of this one.
 */
export class Migration0001Initial extends Migration {
  override name = "0001-initial";

  // Stays whole: one migration is one DDL script, applied as written and never edited.
  up(): void {
    this.addSql(`
      create table account (
        id uuid primary key,
        email text not null,
        password_hash text,
        created_at timestamptz not null default now()
      );
      create unique index account_email_key on account (lower(email));

      create table project (
        id uuid primary key,
        account_id uuid not null references account (id) on delete cascade,
        name text not null,
        is_default boolean not null default false,
        created_at timestamptz not null default now(),
        unique (account_id, name)
      );
      create unique index project_one_default_per_account on project (account_id) where is_default;

      create table api_key (
        id uuid primary key,
        project_id uuid not null references project (id) on delete cascade,
        name text not null,
        secret_digest bytea not null unique,
        display_prefix text not null,
        scopes text[] not null,
        created_at timestamptz not null default now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      create index api_key_project on api_key (project_id);

      create table notification (
        id uuid primary key,
        project_id uuid not null references project (id) on delete cascade,
        topic text not null,
        title text not null,
        message text not null,
        priority text not null,
        click_url text,
        metadata json,
        ttl_seconds integer,
        status text not null,
        created_at timestamptz not null,
        expires_at timestamptz
      );
      create index notification_project_id on notification (project_id, id desc);
      create index notification_project_topic_id on notification (project_id, topic, id desc);

      create table idempotency_record (
        project_id uuid not null references project (id) on delete cascade,
        key text not null,
        fingerprint bytea not null,
        notification_id uuid not null,
        response bytea not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        primary key (project_id, key)
      );
      create index idempotency_record_expires on idempotency_record (expires_at);
    `);
  }
}
