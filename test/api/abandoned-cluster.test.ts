/**
 * An embedded PostgreSQL whose owner was SIGKILLed, on a data directory nobody starts on again
 * (the benchmark's scratch directories): `stopAbandoned` stops it, and leaves alone one whose
 * owner lives and a directory that never had an owner.
 *
 * An owner SIGKILLed whose process id the system has since given to another program: its
 * PostgreSQL is an orphan all the same, and the next start stops it instead of refusing.
 *
 * And a postmaster.pid left by a PostgreSQL that was killed, naming a process id the system has
 * since given to another program: the next start neither signals that program nor is refused by
 * the stale lock file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, mayServe, runningCluster, stopAbandoned } from "../../src/db/embedded/owner.ts";
import { startEmbeddedPostgres } from "../../src/db/embedded/server.ts";
import { waitFor } from "../helpers/wait.ts";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
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

describe("a data directory whose PostgreSQL outlived its owner", () => {
  it("is stopped once the owner is gone, and not while it lives", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-abandoned-"));
    dirs.push(dir);
    const child = await owner(dir);
    const postmaster = Number(
      readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0],
    );
    expect(await stopAbandoned(dir)).toBe(false);
    expect(alive(postmaster)).toBe(true);

    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // Its exit hook never ran: PostgreSQL is still up, an orphan.
    expect(alive(postmaster)).toBe(true);
    expect(await stopAbandoned(dir)).toBe(true);
    expect(alive(postmaster)).toBe(false);
  }, 90_000);

  it("is an orphan when the owner's process id now names another program", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-abandoned-"));
    dirs.push(dir);
    const child = await owner(dir);
    const pgDir = join(dir, "pg");
    const postmaster = Number(readFileSync(join(pgDir, "postmaster.pid"), "utf8").split("\n")[0]);
    expect(runningCluster(dir, pgDir)?.owner).toBe(child.pid);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // The system gives the owner's id to another program: the file is as the owner wrote it,
    // but for the id.
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
    const dir = mkdtempSync(join(tmpdir(), "herald-abandoned-"));
    dirs.push(dir);
    expect(await stopAbandoned(dir)).toBe(false);
  });
});

describe("a postmaster.pid naming another program's process", () => {
  it("is not that program's end: the next start removes the stale file and starts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-stale-lock-"));
    dirs.push(dir);
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
      const postmaster = Number(readFileSync(join(pgDir, "postmaster.pid"), "utf8").split("\n")[0]);
      expect(postmaster).not.toBe(pid);
      expect(mayServe(postmaster, pgDir)).toBe(true);
      expect(runningCluster(dir, pgDir)?.pid).toBe(postmaster);
    } finally {
      await again.stop();
    }
  }, 90_000);
});
