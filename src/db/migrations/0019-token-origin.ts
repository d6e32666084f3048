import { Migration } from "@mikro-orm/migrations";

/** How a CLI token or console session was made, so that two named alike can be told apart. */
export class Migration0019TokenOrigin extends Migration {
  override name = "0019-token-origin";

  up(): void {
    this.addSql("alter table cli_token add column made_by text not null default '';");
  }
}
