import { Migration } from "@mikro-orm/migrations";

/**
 * The capped webhook claim (db/deliveries/webhook-outbox.ts) reads, per endpoint, its sends in flight
 * (leased, not settled) and its oldest due deliveries: an index for each.
 */
export class Migration0015WebhookFairness extends Migration {
  override name = "0015-webhook-fairness";

  up(): void {
    this.addSql(`
      create index webhook_delivery_endpoint_due on webhook_delivery (endpoint_id, next_attempt_at)
        where state = 'pending';
      create index webhook_delivery_in_flight on webhook_delivery (endpoint_id)
        where state = 'pending' and locked_until is not null;
    `);
  }
}
