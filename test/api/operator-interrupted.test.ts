/**
 * An operator's command interrupted (issue "Run it unattended": every process Herald starts is
 * stopped by Herald, whatever signal arrives): a backup with no server running starts its own
 * embedded PostgreSQL; interrupted half-way through copying the tables, by any ending signal,
 * it stops that PostgreSQL (a clean shutdown, waited for), removes its scratch copy of the
 * tables and its half-written archive, and exits as the signal would have ended it.
 *
 * SIGKILL, which no process can handle: its PostgreSQL ends all the same (the parent-death
 * signal), and the scratch copy it leaves is removed by the next backup.
 *
 * Half-way is made certain, not timed: a prepared transaction (which outlives a restart) holds a
 * table the backup must copy, so the backup waits on its lock until the signal comes.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../../src/db/embedded/server.ts";
import { endingSignals, signalExitCode } from "../../src/ending-signals.ts";
import { runScript, spawnHerald, waitForKey } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

async function sql(url: string, statements: string[]): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: unknown[] = [];
    for (const s of statements) out.push((await client.query(s)).rows);
    return out;
  } finally {
    await client.end();
  }
}

/** The data directory's PostgreSQL as postmaster.pid names it: its pid and Herald's database. */
function cluster(dir: string): { pid: number; url: string } {
  const lines = readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n");
  return { pid: Number(lines[0]), url: `postgres://herald:herald@127.0.0.1:${lines[3]}/herald` };
}

/** Whether a backup's copy of a table waits for a lock on the data directory's PostgreSQL. */
async function copyWaiting(dir: string): Promise<boolean> {
  if (!existsSync(join(dir, "pg", "postmaster.pid"))) return false;
  const [rows] = await sql(cluster(dir).url, [
    "select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'copy%'",
  ]).catch(() => [[]]);
  return (rows as unknown[]).length > 0;
}

/** A data directory with Herald's tables, and a table `held` that a prepared transaction locks. */
async function heldDataDir(): Promise<string> {
  const dir = tempDir("herald-interrupted-");
  const server = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
  await waitForKey(server);
  server.child.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  const first = await startEmbeddedPostgres({ dir });
  await sql(first.url, ["alter system set max_prepared_transactions = 2"]);
  await first.stop();
  const again = await startEmbeddedPostgres({ dir });
  await sql(again.url, [
    "create table held (x int)",
    "begin",
    "lock table held in access exclusive mode",
    "prepare transaction 'held'",
  ]);
  await again.stop();
  return dir;
}

describe("an operator's command interrupted", () => {
  it("stops the PostgreSQL it started and leaves no copy behind, whatever the signal", async () => {
    const dir = await heldDataDir();
    for (const signal of endingSignals) {
      const scratch = tempDir("herald-interrupted-tmp-");
      const archive = join(scratch, "herald.tar.gz");
      const child = spawn(process.execPath, [runScript, "ops/backup", archive], {
        env: { ...process.env, DATABASE_URL: "", HERALD_DATA_DIR: dir, TMPDIR: scratch },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
      // The backup has begun copying and waits for `held`.
      await waitFor(() => copyWaiting(dir), 60_000);
      expect(await copyWaiting(dir)).toBe(true);
      const postmaster = cluster(dir).pid;
      expect(readdirSync(scratch)).toHaveLength(1); // the scratch copy of the tables

      child.kill(signal);
      expect(await exited, err).toBe(signalExitCode(signal));
      expect(err).toContain(`interrupted by ${signal}: stopping what this command started`);
      expect(alive(postmaster)).toBe(false);
      expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
      expect(existsSync(join(dir, "postgres.owner"))).toBe(false);
      expect(readdirSync(scratch)).toEqual([]); // neither the copy nor a partial archive
    }
    // It was shut down, not killed: the next start recovers nothing.
    let log = "";
    const next = await startEmbeddedPostgres({ dir, log: (line) => (log += line) });
    await next.stop();
    expect(log).toMatch(/database system is ready/);
    expect(log).not.toMatch(/not properly shut down|automatic recovery/);
  }, 180_000);

  it("SIGKILLed: its PostgreSQL ends with it, and the next backup removes the copy it left", async () => {
    const dir = await heldDataDir();
    const scratch = tempDir("herald-killed-tmp-");
    const archive = join(scratch, "herald.tar.gz");
    const env = { ...process.env, DATABASE_URL: "", HERALD_DATA_DIR: dir, TMPDIR: scratch };
    const backup = () =>
      spawn(process.execPath, [runScript, "ops/backup", archive], { env, stdio: "ignore" });
    const killed = backup();
    const exited = new Promise((r) => killed.once("exit", (_code, signal) => r(signal)));
    await waitFor(() => copyWaiting(dir), 60_000);
    const postmaster = cluster(dir).pid;
    killed.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    // No handler ran: the parent-death signal stopped PostgreSQL; the copy stays, for now.
    await waitFor(() => !alive(postmaster), 30_000);
    const left = readdirSync(scratch);
    expect(left).toEqual([expect.stringMatching(/^herald-backup-/)]);
    expect(readdirSync(join(scratch, left[0] as string))).toContain("notification.copy");

    // `held` let go, the next backup runs to its end and takes the dead one's copy away.
    const pgAgain = await startEmbeddedPostgres({ dir });
    await sql(pgAgain.url, ["commit prepared 'held'"]);
    await pgAgain.stop();
    const next = backup();
    expect(await new Promise((r) => next.once("exit", r))).toBe(0);
    expect(readdirSync(scratch)).toEqual(["herald.tar.gz"]);
  }, 120_000);
});
