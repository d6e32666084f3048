import { Migration } from "@mikro-orm/migrations";

/**
 * Each serving process beats a row of `serving_process` (every 2 s, alive 5 s); an open call (a
 * stream, a long poll) counts against its caps only while its process beats. A process killed
 * mid-stream thus stops holding its devices' places within 5 s, not at its rows' own expiry.
 */
export class Migration0020ServingProcesses extends Migration {
  override name = "0020-serving-processes";

  up(): void {
    this.addSql(`
      create unlogged table serving_process (
        id uuid primary key,
        alive_until timestamptz not null
      );
      alter table open_call add column process_id uuid;
    `);
  }
}
