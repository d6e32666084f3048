/**
 * The embedded PostgreSQL killed under a running Herald (the OOM killer, a `kill -9`): the
 * supervisor starts it again on the same port, the serving processes reconnect, and what was
 * committed before is there. Before, every call answered 503 until a person restarted Herald.
 * Its log file on a full disk: lines are dropped, said once. Before, the first line ended Herald.
 * Held (a storage stall; here SIGSTOP): a stop shuts it down at once after 20 s, then kills it.
 * Before, the stop waited for as long as PostgreSQL was held.
 */
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

describe("the embedded PostgreSQL, killed while Herald runs", () => {
  it("is started again, and Herald serves what it held and takes new publishes", async () => {
    const dataDir = tempDir("herald-pg-killed-");
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "1" });
    const key = await waitForKey(proc);
    const auth = { authorization: `Bearer ${key}` };
    const publish = (title: string) =>
      fetch(`${proc.url}/v1/notify`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ title }),
        signal: AbortSignal.timeout(5_000),
      });
    const before = (await (await publish("before the kill")).json()) as { id: string };
    const pidFile = join(dataDir, "pg", "postmaster.pid");
    const postmaster = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    expect(alive(postmaster)).toBe(true);

    process.kill(postmaster, "SIGKILL");
    await waitFor(() => proc.stdout().includes("the embedded PostgreSQL is running again"), 30_000);
    expect(proc.stdout()).toContain(
      "the embedded PostgreSQL exited (signal SIGKILL); starting it again",
    );
    // The serving process's pool reconnects: a publish goes through (503 meanwhile, never lost).
    let status = 0;
    await waitFor(async () => {
      status = await publish("after the kill").then(
        (r) => r.status,
        () => 0,
      );
      return status === 202;
    }, 20_000);
    expect(status).toBe(202);
    const got = await fetch(`${proc.url}/v1/notifications/${before.id}`, { headers: auth });
    expect(got.status).toBe(200);
    const restarted = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    expect(restarted).not.toBe(postmaster);

    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(alive(restarted)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
  }, 90_000);
});

describe("the embedded PostgreSQL's log on a full disk", () => {
  it("drops its lines, says so once, and Herald serves on", async () => {
    const dataDir = tempDir("herald-pg-log-full-");
    // Every write to /dev/full fails with ENOSPC, as on a full disk.
    symlinkSync("/dev/full", join(dataDir, "postgres.log"));
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "1" });
    const key = await waitForKey(proc);
    const res = await fetch(`${proc.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ title: "logged nowhere" }),
    });
    expect(res.status).toBe(202);
    const said = proc.stdout().split("the embedded PostgreSQL's log cannot be written");
    expect(said).toHaveLength(2);
    expect(said[1]).toMatch(/^ \(ENOSPC/);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(proc.stdout()).toContain("Herald stopped.");
  }, 90_000);
});

describe("the embedded PostgreSQL held when Herald stops", () => {
  it("is shut down at once after 20 s, then killed; the next start recovers", async () => {
    const dataDir = tempDir("herald-pg-held-");
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "1" });
    await waitForKey(proc);
    const postmaster = Number(
      readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0],
    );
    // The postmaster and its backends: its own process group (spawned detached).
    process.kill(-postmaster, "SIGSTOP");
    try {
      proc.child.kill("SIGTERM");
      // A deadline, so that the finally below runs (and frees the held PostgreSQL) if it hangs.
      const deadline = new Promise((r) => setTimeout(() => r("still stopping after 60 s"), 60_000));
      expect(await Promise.race([proc.exited, deadline])).toBe(0);
      const out = proc.stdout();
      expect(out).toContain(
        "the embedded PostgreSQL did not stop: no fast shutdown within 20 s; immediate shutdown",
      );
      expect(out).toContain(
        "the embedded PostgreSQL did not stop: no immediate shutdown within 5 s; killed",
      );
      expect(out.trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
      expect(alive(postmaster)).toBe(false);
    } finally {
      try {
        process.kill(-postmaster, "SIGCONT"); // only when the stop left it held
      } catch {}
    }
    const again = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "1" });
    expect(again.stdout()).toMatch(/^Herald \d+\.\d+\.\d+ is running \(/m);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  }, 120_000);
});
