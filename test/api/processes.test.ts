/**
 * `npm start` with HERALD_PROCESSES=2 serves one port from two processes under a supervisor
 * that owns the embedded PostgreSQL; a process that dies is replaced while the other keeps
 * serving; SIGTERM drains them all and stops PostgreSQL. With 1, the one process is supervised.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { servingProcesses } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

const servers = servingProcesses;

/**
 * The processes with a socket in this state on this local port (ss, as root sees them all);
 * for an established one, only the connection from `peerPort`.
 */
function socketOwners(state: "listening" | "established", port: number, peerPort?: number) {
  const filter = [
    "sport",
    "=",
    `:${port}`,
    ...(peerPort ? ["and", "dport", "=", `:${peerPort}`] : []),
  ];
  const out = execFileSync("ss", ["-Htnp", "state", state, ...filter], { encoding: "utf8" });
  return [...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
}

const publish = (url: string, key: string, title: string) =>
  fetch(`${url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ title }),
    signal: AbortSignal.timeout(5000),
  });

describe("HERALD_PROCESSES", () => {
  it("serves from two processes, replaces one that dies, and drains all on SIGTERM", async () => {
    const dataDir = tempDir("herald-procs-");
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "2" });
    const key = await waitForKey(proc);
    const primary = proc.child.pid as number;
    await waitFor(() => servers(primary).length === 2);
    const first = servers(primary);
    expect(first).toHaveLength(2);
    expect(proc.stdout()).toMatch(/"processes":2/);
    // One malloc arena each (docs/operations.md), unless the environment says otherwise.
    for (const pid of first) {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      expect(env).toContain("MALLOC_ARENA_MAX=1");
    }

    // Each serving process listens on the port itself; the supervisor holds no socket there, so
    // no connection can wait in it for a process that died (node:cluster's round-robin left
    // such connections open and unread for good: supervisor/port.ts).
    const port = Number(new URL(proc.url).port);
    expect(socketOwners("listening", port).sort()).toEqual([...first].sort());
    const socket = connect(port, "127.0.0.1");
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const mine = () => socketOwners("established", port, socket.localPort);
    await waitFor(() => mine().length > 0);
    const [holder] = mine();
    expect(first).toContain(holder);
    expect(socketOwners("established", port)).not.toContain(primary);
    // Its process killed, a connection closes at once (its client reconnects elsewhere).
    process.kill(holder as number, "SIGKILL");
    await closed;
    // Replaced: two processes listen again (while one alone listens, killing it would leave
    // the port closed for a moment; that is for the test below, not this one).
    await waitFor(() => {
      const listening = socketOwners("listening", port);
      return listening.length === 2 && !listening.includes(holder as number);
    }, 15_000);
    first.splice(0, first.length, ...socketOwners("listening", port));

    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => publish(proc.url, key, `n${i}`).then((r) => r.status)),
    );
    expect(statuses).toEqual(statuses.map(() => 202));

    // One dies hard; the other keeps answering, and the supervisor starts a replacement. A kept-
    // alive connection to the dead one is closed: the client retries, as clients do (each of its
    // pooled connections to the dead process fails once).
    process.kill(first[0] as number, "SIGKILL");
    const retrying = async (title: string, left = 5): Promise<Response> =>
      publish(proc.url, key, title).catch((err: unknown) => {
        if (left === 0) throw err;
        return retrying(title, left - 1);
      });
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
    const dataDir = tempDir("herald-procs-");
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "1" });
    const key = await waitForKey(proc);
    // Still supervised: one process to replace if it dies.
    expect(servers(proc.child.pid as number)).toHaveLength(1);
    expect((await publish(proc.url, key, "alone")).status).toBe(202);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);
});
