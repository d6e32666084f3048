import { Migration } from "@mikro-orm/migrations";

/**
 * Per-device deliveries. A notification with status `queued` is the durable fan-out work item
 * (committed with the 202); the worker turns it into one delivery per target device.
 */
export class Migration0004Deliveries extends Migration {
  override name = "0004-deliveries";

  up(): void {
    this.addSql(`
      create index notification_queued on notification (id) where status = 'queued';

      create table delivery (
        notification_id uuid not null references notification (id) on delete cascade,
        device_id uuid not null references device (id) on delete cascade,
        platform text not null,
        state text not null default 'pending',
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        locked_until timestamptz,
        last_error text not null default '',
        created_at timestamptz not null default now(),
        sent_at timestamptz,
        delivered_at timestamptz,
        opened_at timestamptz,
        updated_at timestamptz not null default now(),
        primary key (notification_id, device_id)
      );
      create index delivery_due on delivery (next_attempt_at)
        where state = 'pending' and platform <> 'stream';
      create index delivery_device on delivery (device_id, notification_id);
    `);
  }
}
