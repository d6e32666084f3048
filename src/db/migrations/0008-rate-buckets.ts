import { Migration } from "@mikro-orm/migrations";

/**
 * The shared per-credential token buckets (db/policies/rate-limits.ts): every process leases
 * tokens from one row per key, so the limit holds however many processes or machines serve.
 * Unlogged: a bucket is worth nothing after a crash (it refills in seconds) and its writes should
 * not cost a WAL flush.
 */
export class Migration0008RateBuckets extends Migration {
  override name = "0008-rate-buckets";

  up(): void {
    this.addSql(`
      create unlogged table rate_bucket (
        key text primary key,
        tokens double precision not null,
        granted integer not null default 0,
        updated_at timestamptz not null
      );
    `);
  }
}
