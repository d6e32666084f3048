import { Migration } from "@mikro-orm/migrations";

/** A device's quiet hours: its time zone and the span of the day (minutes since midnight). */
export class Migration0024QuietHours extends Migration {
  override name = "0024-quiet-hours";

  up(): void {
    this.addSql(`
      alter table device
        add column quiet_tz text,
        add column quiet_start smallint,
        add column quiet_end smallint;
    `);
  }
}
