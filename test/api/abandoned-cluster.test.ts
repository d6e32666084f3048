/**
 * An embedded PostgreSQL outlives its owner only where the parent-death signal is missing (no
 * setpriv, or an owner dead in the instant before setpriv set it): on this Linux an owner
 * SIGKILLed takes its PostgreSQL with it, shut down cleanly. The orphan the other systems leave
 * (PostgreSQL up, the process postgres.owner names gone) is made here by pointing the file at an
 * ended process: `stopAbandoned` stops it (the benchmark's scratch directories, which nobody
 * starts on again), and leaves alone one whose owner lives and a directory that never had one.
 *
 * An owner whose process id the system has since given to another program: its PostgreSQL is
 * an orphan all the same, and the next start stops it instead of refusing.
 *
 * What interrupted runs left in TMPDIR (`removeAbandoned`: the test suite's cluster, the
 * benchmark's scratch): a directory whose owner was SIGKILLed goes; one whose owner lives stays.
 *
 * And a postmaster.pid left by a PostgreSQL that was killed, naming a process id the system has
 * since given to another program: the next start neither signals that program nor is refused by
 * the stale lock file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  mayServe,
  removeAbandoned,
  runningCluster,
  stopAbandoned,
} from "../../src/db/embedded/owner.ts";
import { startEmbeddedPostgres } from "../../src/db/embedded/server.ts";
import { alive } from "../../src/process-stamp.ts";
import { tempDir } from "../helpers/temp.ts";
import { waitFor } from "../helpers/wait.ts";

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
});

const server = join(import.meta.dirname, "../../src/db/embedded/server.ts");

/** A process that starts an embedded PostgreSQL on `dir` and waits; resolves once it is up. */
async function owner(dir: string): Promise<ChildProcess> {
  const script = `const { startEmbeddedPostgres } = await import(${JSON.stringify(server)});
    await startEmbeddedPostgres({ dir: ${JSON.stringify(dir)} });
    console.log("up");
    setInterval(() => {}, 60_000);`;
  const child = spawn(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", "--input-type=module", "-e", script],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await waitFor(() => out.includes("up"), 60_000);
  return child;
}

/** The process id of a program that has ended. */
async function endedPid(): Promise<number> {
  const p = spawn("true", { stdio: "ignore" });
  await new Promise((r) => p.once("exit", r));
  return p.pid as number;
}

const postmasterOf = (pgDir: string) =>
  Number(readFileSync(join(pgDir, "postmaster.pid"), "utf8").split("\n")[0]);

describe("an owner SIGKILLed", () => {
  it("takes its PostgreSQL with it: a fast shutdown, at once, with nothing left to stop", async () => {
    const dir = tempDir("herald-abandoned-");
    const child = await owner(dir);
    const postmaster = postmasterOf(join(dir, "pg"));
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // No exit hook ran; the parent-death signal asked PostgreSQL for a fast shutdown.
    await waitFor(() => !alive(postmaster), 30_000);
    expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
    expect(await stopAbandoned(dir)).toBe(true); // abandoned, and nothing runs on it
    let log = "";
    const again = await startEmbeddedPostgres({ dir, log: (l) => (log += l) });
    await again.stop();
    expect(log).toMatch(/database system was shut down at/);
    expect(log).not.toMatch(/not properly shut down|automatic recovery/);
  }, 90_000);
});

describe("a data directory whose PostgreSQL outlived its owner", () => {
  it("is stopped once the owner is gone, and not while it lives", async () => {
    const dir = tempDir("herald-abandoned-");
    await owner(dir);
    const postmaster = postmasterOf(join(dir, "pg"));
    expect(await stopAbandoned(dir)).toBe(false);
    expect(alive(postmaster)).toBe(true);

    // The orphan a system without setpriv leaves: the owner the file names has ended.
    const file = join(dir, "postgres.owner");
    writeFileSync(file, readFileSync(file, "utf8").replace(/^\d+/, String(await endedPid())));
    expect(await stopAbandoned(dir)).toBe(true);
    expect(alive(postmaster)).toBe(false);
  }, 90_000);

  it("is an orphan when the owner's process id now names another program", async () => {
    const dir = tempDir("herald-abandoned-");
    const child = await owner(dir);
    const pgDir = join(dir, "pg");
    const postmaster = postmasterOf(pgDir);
    expect(runningCluster(dir, pgDir)?.owner).toBe(child.pid);
    // The owner gone without its PostgreSQL, and the system gives its id to another program:
    // the file is as the owner wrote it, but for the id.
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    children.push(other);
    const file = join(dir, "postgres.owner");
    writeFileSync(file, readFileSync(file, "utf8").replace(/^\d+/, String(other.pid)));

    expect(runningCluster(dir, pgDir)).toEqual({
      pid: postmaster,
      port: expect.any(Number),
      owner: undefined,
    });
    const again = await startEmbeddedPostgres({ dir });
    try {
      expect(alive(postmaster)).toBe(false);
      expect(other.signalCode).toBeNull();
      expect(runningCluster(dir, pgDir)?.owner).toBeUndefined(); // this process: not another
      expect(readFileSync(file, "utf8")).toMatch(new RegExp(`^${process.pid} \\d+\\n$`));
    } finally {
      await again.stop();
    }
  }, 90_000);

  it("leaves a directory that never had an owner (a run still starting)", async () => {
    const dir = tempDir("herald-abandoned-");
    expect(await stopAbandoned(dir)).toBe(false);
  });
});

describe("a postmaster.pid naming another program's process", () => {
  it("is not that program's end: the next start removes the stale file and starts", async () => {
    const dir = tempDir("herald-stale-lock-");
    const first = await startEmbeddedPostgres({ dir });
    const pgDir = first.clusterDir;
    await first.stop();
    // Another program now has the id the file names (PostgreSQL killed; the id given again).
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    children.push(other);
    const pid = other.pid as number;
    writeFileSync(
      join(pgDir, "postmaster.pid"),
      `${pid}\n${pgDir}\n1795800000\n5432\n/tmp\n127.0.0.1\n  1234   5678\nready   \n`,
    );
    expect(mayServe(pid, pgDir)).toBe(false);
    expect(runningCluster(dir, pgDir)).toBeUndefined();

    const again = await startEmbeddedPostgres({ dir });
    try {
      expect(alive(pid)).toBe(true);
      expect(other.signalCode).toBeNull();
      const postmaster = postmasterOf(pgDir);
      expect(postmaster).not.toBe(pid);
      expect(mayServe(postmaster, pgDir)).toBe(true);
      expect(runningCluster(dir, pgDir)?.pid).toBe(postmaster);
    } finally {
      await again.stop();
    }
  }, 90_000);
});

describe("what interrupted runs left in TMPDIR", () => {
  it("is removed once its owner is gone; a living run's and other names stay", async () => {
    const parent = tempDir("herald-sweep-");
    chmodSync(parent, 0o755); // as TMPDIR is: the clusters run in their directories, not relocated
    const [gone, living, other] = ["herald-test-pg-gone", "herald-test-pg-living", "other"].map(
      (name) => {
        const d = join(parent, name);
        mkdirSync(d);
        return d;
      },
    ) as [string, string, string];
    // Two owners SIGKILLed, one under another name: only the prefix keeps that one.
    const killed = [await owner(gone), await owner(other)];
    await owner(living);
    const postmasters = [gone, other].map((d) => postmasterOf(join(d, "pg")));
    for (const k of killed) k.kill("SIGKILL");
    // Their PostgreSQL ends with them; their directories stay, naming an owner that is gone.
    await waitFor(() => postmasters.every((pid) => !alive(pid)), 30_000);
    expect(existsSync(join(gone, "postgres.owner"))).toBe(true);

    expect(await removeAbandoned(parent, "herald-test-pg-")).toEqual([gone]);
    expect([gone, living, other].map((d) => existsSync(d))).toEqual([false, true, true]);
  }, 120_000);
});
