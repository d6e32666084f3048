/**
 * `npm start` with HERALD_PROCESSES=2 serves one port from two processes under a supervisor
 * that owns the embedded PostgreSQL; a process that dies is replaced while the other keeps
 * serving; SIGTERM drains them all and stops PostgreSQL. With 1, the one process is supervised.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { waitFor } from "../helpers/wait.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The serving processes the supervisor forked (its children running main.ts). */
function servers(primary: number): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(primary)], { encoding: "utf8" });
  } catch {
    return []; // no children
  }
  return out
    .split("\n")
    .filter((l) => /dist\/server[-\d]*\/src\/main\.js/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

const publish = (url: string, key: string, title: string) =>
  fetch(`${url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ title }),
    // A connection handed to the process just as it died can be left unanswered: a client's
    // timeout, then its retry, deal with it.
    signal: AbortSignal.timeout(5000),
  });

describe("HERALD_PROCESSES", () => {
  it("serves from two processes, replaces one that dies, and drains all on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "herald-procs-"));
    dirs.push(dataDir);
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "2" });
    const key = await waitForKey(proc);
    const primary = proc.child.pid as number;
    await waitFor(() => servers(primary).length === 2);
    const first = servers(primary);
    expect(first).toHaveLength(2);
    expect(proc.stdout()).toMatch(/"processes":2/);

    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => publish(proc.url, key, `n${i}`).then((r) => r.status)),
    );
    expect(statuses).toEqual(statuses.map(() => 202));

    // One dies hard; the other keeps answering, and the supervisor starts a replacement. A kept-
    // alive connection to the dead one is reset: the client retries once, as clients do.
    process.kill(first[0] as number, "SIGKILL");
    const retrying = (title: string) =>
      publish(proc.url, key, title).catch(() => publish(proc.url, key, title));
    const during = await Promise.all(
      Array.from({ length: 10 }, (_, i) => retrying(`d${i}`).then((r) => r.status)),
    );
    expect(during).toEqual(during.map(() => 202));
    await waitFor(() => {
      const now = servers(primary);
      return now.length === 2 && !now.includes(first[0] as number);
    }, 15_000);
    const replaced = servers(primary);
    expect(replaced).toHaveLength(2);
    expect(replaced).not.toContain(first[0]);
    expect(replaced).toContain(first[1]);
    expect(proc.stdout()).toContain(
      "a serving process died while serving (signal SIGKILL); starting another",
    );

    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    for (const pid of replaced) expect(() => process.kill(pid, 0)).toThrow();
    // The supervisor stopped its PostgreSQL too.
    expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(false);
  }, 60_000);

  it("serves from one supervised process with HERALD_PROCESSES=1", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "herald-procs-"));
    dirs.push(dataDir);
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "1" });
    const key = await waitForKey(proc);
    // Still supervised: one process to replace if it dies.
    expect(servers(proc.child.pid as number)).toHaveLength(1);
    expect((await publish(proc.url, key, "alone")).status).toBe(202);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);
});
