import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createDatabaseIfMissing } from "../../src/db/embedded/server.ts";
import { openDatabase } from "../../src/db/orm.ts";

/** A new database cloned from the migrated template; its URL. */
export async function freshDatabase(): Promise<string> {
  const server = inject("pgServerUrl");
  const name = `herald_t_${process.ppid}_${randomBytes(4).toString("hex")}`;
  await createDatabaseIfMissing(`${server}/postgres`, name, inject("templateDatabase"));
  return `${server}/${name}`;
}

/** A plain client on a database, for reading raw tables as an auditor would. */
export async function sql<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** An ORM on `url` whose statements have a serving process's deadline, short: `ms`. */
export const withDeadline = (url: string, ms = 300) =>
  openDatabase({ url, poolSize: 1, migrate: false, statementDeadlineMs: ms });
