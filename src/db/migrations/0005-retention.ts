import { Migration } from "@mikro-orm/migrations";

/**
 * Notifications are deleted after the retention period (30 days by default), but the monthly
 * quota counts every notification of the month: what the purge deletes is added here, per
 * account and calendar month (UTC), so that a month's count survives its rows.
 */
export class Migration0005Retention extends Migration {
  override name = "0005-retention";

  up(): void {
    this.addSql(`
      create table usage_purged (
        account_id uuid not null references account (id) on delete cascade,
        month date not null,
        notifications bigint not null,
        primary key (account_id, month)
      );
    `);
  }
}
