import { Migration } from "@mikro-orm/migrations";

/**
 * Replace in place: a notification's `replace_key`, and the index that finds the one a later
 * notification of the project with the same key replaces (for the streams' `replaced` event).
 */
export class Migration0023ReplaceKey extends Migration {
  override name = "0023-replace-key";

  up(): void {
    this.addSql(`
      alter table notification add column replace_key text;
      create index notification_replace_key on notification (project_id, replace_key, id)
        where replace_key is not null;
    `);
  }
}
