import { Migration } from "@mikro-orm/migrations";

/** Who started a device login (client address, User-Agent): shown to whoever approves it. */
export class Migration0018LoginRequester extends Migration {
  override name = "0018-login-requester";

  up(): void {
    this.addSql(`
      alter table device_login
        add column requested_from text not null default '',
        add column user_agent text not null default '';
    `);
  }
}
