import { Migration } from "@mikro-orm/migrations";

/**
 * Webhook events and attempts go with the retention period, as notifications do
 * (db/repositories/retention.ts): indexes by their time, so an hourly purge finds the old ones
 * without reading the rest.
 */
export class Migration0025HistoryRetention extends Migration {
  override name = "0025-history-retention";

  up(): void {
    this.addSql(`
      create index webhook_event_created on webhook_event (created_at);
      create index webhook_attempt_attempted on webhook_attempt (attempted_at);
    `);
  }
}
