import { Migration } from "@mikro-orm/migrations";

/**
 * The monthly quota's shared ledger (db/policies/quota.ts): one row per account and month
 * holding how many publishes every process together has leased. Its first value is the month's
 * count of notifications (what was published before the ledger existed, or purged since);
 * after that, processes lease from it in chunks. Logged: the quota must survive a crash.
 */
export class Migration0009QuotaLedger extends Migration {
  override name = "0009-quota-ledger";

  up(): void {
    this.addSql(`
      create table quota_ledger (
        account_id uuid not null references account (id) on delete cascade,
        month date not null,
        leased integer not null,
        granted integer not null default 0,
        primary key (account_id, month)
      );
    `);
  }
}
