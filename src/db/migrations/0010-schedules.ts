import { Migration } from "@mikro-orm/migrations";

/**
 * Scheduled delivery: a notification may wait, with status `scheduled`, for its `deliver_at`;
 * the worker releases the due ones to the fan-out through the partial index.
 */
export class Migration0010Schedules extends Migration {
  override name = "0010-schedules";

  up(): void {
    this.addSql(`
      alter table notification add column deliver_at timestamptz;
      create index notification_scheduled on notification (deliver_at) where status = 'scheduled';
    `);
  }
}
