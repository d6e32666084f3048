import { Migration } from "@mikro-orm/migrations";

/**
 * Clears: when a notification is acknowledged, each other Web Push device that was sent it gets
 * a push that closes it. A small outbox, filled by the acknowledgement's own statement and
 * drained by the workers (best effort: a clear that fails is not retried).
 */
export class Migration0013ClearPushes extends Migration {
  override name = "0013-clear-pushes";

  up(): void {
    this.addSql(`
      create table clear_push (
        notification_id uuid not null references notification (id) on delete cascade,
        device_id uuid not null references device (id) on delete cascade,
        created_at timestamptz not null default now(),
        primary key (notification_id, device_id)
      );
    `);
  }
}
