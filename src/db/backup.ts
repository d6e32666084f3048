/**
 * A logical copy of Herald's tables, for `npm run backup` and `npm run restore`: every table's
 * rows in PostgreSQL's COPY text format, read in one REPEATABLE READ READ ONLY transaction (one
 * consistent snapshot, while the server keeps running), and written back in foreign-key order
 * with the tables' own triggers off (restored rows are history: they fire no webhook again).
 * No pg_dump is needed, so it works on the embedded PostgreSQL and on any DATABASE_URL.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";

export const migrationsTable = "herald_migrations";

/**
 * A client for a command's statements. A connection lost while it is open (the database stopping
 * under an interrupted command, or restarting under a backup) fails the statement under way, or
 * the next; without a listener, pg's `error` event would end the process with a stack trace.
 */
async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

export interface TableCopy {
  name: string;
  columns: string[];
}

export interface DumpManifest {
  /** The migrations applied to the copied database, in order. */
  migrations: string[];
  tables: TableCopy[];
}

/** Tables in an order that satisfies their foreign keys (referenced tables first). */
async function tablesInOrder(client: pg.Client): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>(
    "select tablename as name from pg_tables where schemaname = 'public' and tablename <> $1 order by 1",
    [migrationsTable],
  );
  const { rows: refs } = await client.query<{ child: string; parent: string }>(
    `select c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent
       from pg_constraint c join pg_namespace n on n.oid = c.connamespace
      where c.contype = 'f' and n.nspname = 'public'`,
  );
  const order: string[] = [];
  const visit = (name: string, path: string[]) => {
    if (order.includes(name) || path.includes(name)) return;
    for (const r of refs)
      if (r.child === name && r.parent !== name) visit(r.parent, [...path, name]);
    order.push(name);
  };
  for (const t of tables) visit(t.name, []);
  return order;
}

async function columnsOf(client: pg.Client, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select attname as name from pg_attribute
      where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`,
    [table],
  );
  return rows.map((r) => r.name);
}

/** Copies every table into `dir` (one `<table>.copy` file each); returns what it copied. */
export async function dumpTables(url: string, dir: string): Promise<DumpManifest> {
  const client = await connect(url);
  try {
    await client.query("begin isolation level repeatable read read only");
    const { rows } = await client.query<{ name: string }>(
      `select name from ${migrationsTable} order by id`,
    );
    const tables: TableCopy[] = [];
    for (const name of await tablesInOrder(client)) {
      const columns = await columnsOf(client, name);
      const list = columns.map((c) => client.escapeIdentifier(c)).join(", ");
      const source = client.query(
        copyTo(`copy ${client.escapeIdentifier(name)} (${list}) to stdout`),
      );
      await pipeline(source, createWriteStream(join(dir, `${name}.copy`), { mode: 0o600 }));
      tables.push({ name, columns });
    }
    await client.query("commit");
    return { migrations: rows.map((r) => r.name), tables };
  } finally {
    await client.end();
  }
}

/** Loads the copied tables from `dir` into an empty database migrated to the same point. */
export async function loadTables(url: string, dir: string, tables: TableCopy[]): Promise<void> {
  const client = await connect(url);
  try {
    await client.query("begin");
    for (const t of tables) {
      const table = client.escapeIdentifier(t.name);
      const list = t.columns.map((c) => client.escapeIdentifier(c)).join(", ");
      await client.query(`alter table ${table} disable trigger user`);
      const sink = client.query(copyFrom(`copy ${table} (${list}) from stdin`));
      // PostgreSQL's COPY error names the value and the line, not the table: say which.
      await pipeline(createReadStream(join(dir, `${t.name}.copy`)), sink).catch((err: Error) => {
        throw new Error(`table ${t.name}: ${err.message}`, { cause: err });
      });
      await client.query(`alter table ${table} enable trigger user`);
    }
    await client.query("commit");
  } catch (err) {
    await client.query("rollback").catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

/** Whether the database holds any account (a restore goes into an empty one only). */
export async function hasAccounts(url: string): Promise<boolean> {
  const client = await connect(url);
  try {
    const { rows } = await client.query("select 1 from account limit 1");
    return rows.length > 0;
  } finally {
    await client.end();
  }
}
