import { Migration } from "@mikro-orm/migrations";

/**
 * A cancel that meets a push copy on the wire cannot take it back, but it must not let it be
 * sent again: the copy carries the request, and the settle that would have scheduled its retry
 * cancels it instead (as does a claim that finds it after its worker died).
 */
export class Migration0021CancelInFlight extends Migration {
  override name = "0021-cancel-in-flight";

  up(): void {
    this.addSql(`alter table delivery add column cancel_requested boolean not null default false;`);
  }
}
