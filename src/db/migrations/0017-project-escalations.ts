import { Migration } from "@mikro-orm/migrations";

/**
 * Whether a project accepts escalations from the API keys of its account's other projects: off
 * by default, so a key's notifications escalate only within its own project.
 */
export class Migration0017ProjectEscalations extends Migration {
  override name = "0017-project-escalations";

  up(): void {
    this.addSql(
      "alter table project add column accepts_escalations boolean not null default false;",
    );
  }
}
