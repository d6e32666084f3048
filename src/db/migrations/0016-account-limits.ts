import { Migration } from "@mikro-orm/migrations";

/**
 * The caps per account that hold across processes (domain/limits.ts):
 * - `open_call`: the live streams and long polls in every process, each row renewed while its
 *   call lasts and expiring soon after a process that held it dies (unlogged: after a crash
 *   there are no calls);
 * - an index to count a project's notifications scheduled and not yet due.
 */
export class Migration0016AccountLimits extends Migration {
  override name = "0016-account-limits";

  up(): void {
    this.addSql(`
      create unlogged table open_call (
        id uuid primary key,
        kind text not null,
        account_id uuid not null,
        device_id uuid,
        alive_until timestamptz not null
      );
      create index open_call_account on open_call (account_id, kind);
      create index notification_scheduled_project on notification (project_id)
        where status = 'scheduled';
    `);
  }
}
