/** Whether the database can serve: it answers, and every migration of this build is applied. */
import { migrations } from "../migrations/index.ts";
import type { Orm } from "../orm.ts";

export class HealthRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  /** Why the database cannot serve this build, or undefined when it can. One cheap query. */
  async problem(): Promise<string | undefined> {
    try {
      const rows = await this.#orm.em
        .getConnection()
        .execute<{ n: string | number }[]>("select count(*) as n from herald_migrations");
      const applied = Number(rows[0]?.n ?? 0);
      return applied < migrations.length
        ? `migrations pending: ${applied} of ${migrations.length} applied`
        : undefined;
    } catch {
      return "the database does not answer";
    }
  }
}
