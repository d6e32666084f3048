/**
 * Stop means stopped (issue "Run it unattended"): every ordinary way of stopping `npm start`
 * ends every process, with the embedded PostgreSQL last and shut down cleanly (its log says so,
 * and the next start recovers nothing), and one line says that Herald stopped. So does any other
 * signal whose default would end the supervisor; and SIGKILL, which no process can handle,
 * still leaves nothing running.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { endingSignals } from "../../src/ending-signals.ts";
import { type HeraldProcess, runScript, spawnHerald, waitForKey } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive, descendants, type Row } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

const dataDir = () => tempDir("herald-stop-");

/** Starts Herald with two serving processes in a process group of its own, as a terminal does. */
async function started(dir: string): Promise<{ proc: HeraldProcess; tree: number[]; rows: Row[] }> {
  const proc = await spawnHerald(
    { HERALD_DATA_DIR: dir, HERALD_PROCESSES: "2" },
    { ownGroup: true },
  );
  await waitForKey(proc);
  const rows = descendants(proc.child.pid as number);
  const tree = [proc.child.pid as number, ...rows.map((r) => r.pid)];
  // The supervisor, two serving processes, PostgreSQL and its own processes.
  expect(tree.length).toBeGreaterThan(4);
  return { proc, tree, rows };
}

/** Everything is gone, and PostgreSQL shut down cleanly (not killed, not left running). */
async function stoppedCleanly(dir: string, tree: number[]): Promise<void> {
  await waitFor(() => tree.every((pid) => !alive(pid)), 10_000);
  expect(tree.filter(alive)).toEqual([]);
  expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
  expect(existsSync(join(dir, "postgres.owner"))).toBe(false);
  const log = readFileSync(join(dir, "postgres.log"), "utf8");
  expect(log.trimEnd().split("\n").at(-1)).toMatch(/database system is shut down/);
}

/** `signal` to the supervisor alone: everything stops cleanly, and the last line says so. */
async function stopsOn(signal: NodeJS.Signals): Promise<void> {
  const dir = dataDir();
  const { proc, tree } = await started(dir);
  proc.child.kill(signal);
  expect(await proc.exited, signal).toBe(0);
  await stoppedCleanly(dir, tree);
  expect(proc.stdout().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
}

describe("stopping npm start", () => {
  it("SIGTERM to the supervisor alone", () => stopsOn("SIGTERM"), 60_000);

  it("SIGINT to the whole process group, and again a second later", async () => {
    const dir = dataDir();
    const { proc, tree } = await started(dir);
    const group = -(proc.child.pid as number);
    // Twice at once (the terminal's, and npm forwarding the same), then once more.
    process.kill(group, "SIGINT");
    process.kill(group, "SIGINT");
    await new Promise((r) => setTimeout(r, 1_100));
    if (alive(proc.child.pid as number)) process.kill(group, "SIGINT");
    expect(await proc.exited).toBe(0);
    await stoppedCleanly(dir, tree);
  }, 60_000);

  it("Ctrl-\\ in a terminal: SIGQUIT to the whole process group", async () => {
    const dir = dataDir();
    const { proc, tree } = await started(dir);
    process.kill(-(proc.child.pid as number), "SIGQUIT");
    expect(await proc.exited).toBe(0);
    await stoppedCleanly(dir, tree);
  }, 60_000);

  it("with stdout and stderr closed pipes (npm start | tee, tee gone)", async () => {
    const dir = dataDir();
    const { proc, tree } = await started(dir);
    proc.child.stdout?.destroy();
    proc.child.stderr?.destroy();
    process.kill(-(proc.child.pid as number), "SIGTERM");
    expect(await proc.exited).toBe(0);
    await stoppedCleanly(dir, tree);
  }, 60_000);

  it("systemd's default control-group kill: SIGTERM to every process at once", async () => {
    const dir = dataDir();
    const { proc, tree, rows } = await started(dir);
    // PostgreSQL and its own processes too (they are in no process group of ours). As systemd
    // does, what has ended since the list was read is skipped: only PostgreSQL's own passing
    // processes may have (an autovacuum worker, a backend whose connection closed).
    const gone: string[] = [];
    for (const pid of tree) {
      try {
        process.kill(pid, "SIGTERM");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
        gone.push(rows.find((r) => r.pid === pid)?.args ?? `the supervisor ${pid}`);
      }
    }
    expect(gone.filter((args) => !args.startsWith("postgres:"))).toEqual([]);
    expect(await proc.exited).toBe(0);
    await stoppedCleanly(dir, tree);
    // The next start finds a database that was shut down, not one to recover.
    const again = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
    expect(readFileSync(join(dir, "postgres.log"), "utf8")).not.toMatch(
      /not properly shut down|automatic recovery/,
    );
  }, 60_000);

  it("every other signal whose default would end it (SIGUSR2, SIGALRM, …): a stop as for SIGTERM", async () => {
    const asked = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
    const others = endingSignals.filter((s) => !asked.includes(s));
    expect(others).toContain("SIGUSR2");
    for (const signal of others) await stopsOn(signal);
  }, 180_000);

  it("SIGKILL to the supervisor: the serving processes and PostgreSQL end all the same", async () => {
    const dir = dataDir();
    const { proc, tree } = await started(dir);
    proc.child.kill("SIGKILL");
    await proc.exited;
    // The serving processes see their supervisor gone; PostgreSQL gets its parent-death signal.
    await waitFor(() => tree.every((pid) => !alive(pid)), 30_000);
    expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
    // Shut down, not killed: the next start finds nothing to recover, and no one in its way.
    const again = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
    const log = readFileSync(join(dir, "postgres.log"), "utf8");
    expect(log).toMatch(/database system was shut down at/);
    expect(log).not.toMatch(/not properly shut down|automatic recovery/);
  }, 60_000);

  it("Ctrl-C in a terminal: readable lines, then one line saying it stopped", async () => {
    const dir = dataDir();
    // `script` gives Herald a real pseudo-terminal; ^C typed into it is the terminal's SIGINT.
    // `exec`, as `npm start` does and as a person's shell runs a command: without it `script`'s
    // /bin/sh (dash, when SHELL is unset) waits in the foreground group and dies of the ^C first.
    const command = `exec '${process.execPath}' '${runScript}' main`;
    const term = spawn("script", ["-qfec", command, "/dev/null"], {
      env: { ...process.env, HERALD_PORT: "0", DATABASE_URL: "", HERALD_DATA_DIR: dir },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    term.stdout.on("data", (d: Buffer) => {
      screen += d.toString();
    });
    const exited = new Promise<number | null>((r) => term.once("exit", (code) => r(code)));
    await waitFor(() => /Sign-up is closed/.test(screen), 30_000);
    const supervisor = Number(
      /^(\d+)/.exec(readFileSync(join(dir, "postgres.owner"), "utf8"))?.[1],
    );
    const tree = [supervisor, ...descendants(supervisor).map((r) => r.pid)];
    term.stdin.write("\x03");
    expect(await exited).toBe(0);
    await stoppedCleanly(dir, tree);
    // One readable line per event on a terminal, not JSON; the platforms said once.
    expect(screen).not.toMatch(/^\{"level"/m);
    expect(screen).toMatch(/INFO.*serving/);
    expect(screen.match(/Push: Web Push ready/g)).toHaveLength(1);
    expect(screen.trimEnd().split(/\r?\n/).at(-1)).toBe("Herald stopped.");
  }, 60_000);
});
