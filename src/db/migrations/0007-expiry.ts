import { Migration } from "@mikro-orm/migrations";

/**
 * Optional expiry dates for API keys and CLI tokens (a device login carries the one its CLI
 * asked for until the token is minted). An expired credential is refused like a revoked one.
 */
export class Migration0007Expiry extends Migration {
  override name = "0007-expiry";

  up(): void {
    this.addSql(`
      alter table api_key add column expires_at timestamptz;
      alter table cli_token add column expires_at timestamptz;
      alter table device_login add column token_expires_at timestamptz;
    `);
  }
}
