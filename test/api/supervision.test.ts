/**
 * The supervisor of `npm start` (issue "Run it unattended"): a serving process that dies at any
 * moment is replaced, young deaths in a row back off, and processes that cannot start for the
 * same reason stop the whole server with that reason and a non-zero exit.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/ports.ts";
import {
  keyFrom,
  launchHerald,
  logLines,
  publisher,
  spawnHerald,
  waitForKey,
} from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive, servingProcesses } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

const dataDir = () => tempDir("herald-supervise-");

/** Loaded into each process: in a serving process, it takes the SMTP port before Herald does. */
const portTaker = fileURLToPath(new URL("../fixtures/smtp-port-taken.mjs", import.meta.url));

/**
 * Herald on `dir` with `processes` serving processes that cannot start: the SMTP port is free
 * when the supervisor checks it, and taken in each serving process before Herald listens on it
 * (as by another program after the check), so every start fails the same way and says why.
 */
async function failingToStart(dir: string, processes: number) {
  const smtpPort = await freePort();
  const proc = launchHerald({
    HERALD_DATA_DIR: dir,
    HERALD_PROCESSES: String(processes),
    HERALD_SMTP_PORT: String(smtpPort),
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${portTaker}`.trim(),
  });
  return { proc, smtpPort };
}

describe("the supervisor", () => {
  it("replaces processes that die serving or starting, backing off while a slot dies young", async () => {
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir(), HERALD_PROCESSES: "2" });
    const key = await waitForKey(proc);
    const supervisor = proc.child.pid as number;
    const first = servingProcesses(supervisor);
    expect(first).toHaveLength(2);
    const seen = new Set(first);

    // A serving process dies; its replacement is killed while it starts, twice.
    process.kill(first[0] as number, "SIGKILL");
    for (let i = 0; i < 2; i++) {
      let fresh: number | undefined;
      await waitFor(() => {
        fresh = servingProcesses(supervisor).find((p) => !seen.has(p));
        return fresh !== undefined;
      }, 10_000);
      expect(fresh).toBeDefined();
      seen.add(fresh as number);
      process.kill(fresh as number, "SIGKILL");
    }
    // The third replacement is left to start, and serves (the two killed never listened).
    const listening = () => proc.stdout().match(/Server listening at/g)?.length ?? 0;
    await waitFor(() => listening() === 3, 15_000);
    expect(listening()).toBe(3);
    expect(servingProcesses(supervisor)).toHaveLength(2);
    const died = logLines(proc.stdout(), "a serving process died");
    expect(died.map((l) => [l.phase, l.signal, l.restart_in_ms])).toEqual([
      ["serving", "SIGKILL", 0],
      ["starting", "SIGKILL", 500],
      ["starting", "SIGKILL", 1000],
    ]);
    expect(died[1]?.msg).toBe(
      "a serving process died while starting (signal SIGKILL); starting another in 0.5 s",
    );
    const res = await fetch(`${proc.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ title: "after the crashes" }),
    });
    expect(res.status).toBe(202);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);

  it("kills and replaces a serving process that hangs, not one it could not hear from itself", async () => {
    const proc = await spawnHerald({
      HERALD_DATA_DIR: dataDir(),
      HERALD_PROCESSES: "2",
      HERALD_WATCHDOG_SECONDS: "2",
    });
    const key = await waitForKey(proc);
    const supervisor = proc.child.pid as number;
    await waitFor(() => servingProcesses(supervisor).length === 2);
    const [hung, other] = servingProcesses(supervisor) as [number, number];
    const killed = () => logLines(proc.stdout(), "a serving process showed no sign of life");

    // The supervisor itself held for longer than the watchdog (a suspended machine, say): it
    // heard nothing meanwhile, and kills nobody for it.
    process.kill(supervisor, "SIGSTOP");
    await new Promise((r) => setTimeout(r, 3_000)); // the hold itself, not a wait for an event
    process.kill(supervisor, "SIGCONT");

    // A serving process whose event loop is held for good: killed within the watchdog, replaced.
    process.kill(hung, "SIGSTOP");
    await waitFor(() => killed().length > 0, 15_000);
    expect(killed().map((l) => l.worker_pid)).toEqual([hung]);
    expect(killed()[0]?.silent_ms).toBeGreaterThanOrEqual(2_000);
    await waitFor(() => {
      const now = servingProcesses(supervisor);
      return now.length === 2 && !now.includes(hung);
    }, 15_000);
    expect(alive(hung)).toBe(false);
    expect(servingProcesses(supervisor)).toContain(other);
    // New connections all answered: none lands on the hung process's socket.
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${proc.url}/v1/notify`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, connection: "close" },
          body: JSON.stringify({ title: `after the hang ${i}` }),
          signal: AbortSignal.timeout(5_000),
        }).then((r) => r.status),
      ),
    );
    expect(statuses).toEqual(statuses.map(() => 202));
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);

  it("kills and replaces a serving process stuck starting", async () => {
    const proc = await spawnHerald({
      HERALD_DATA_DIR: dataDir(),
      HERALD_PROCESSES: "2",
      HERALD_START_TIMEOUT_SECONDS: "5",
    });
    await waitForKey(proc);
    const supervisor = proc.child.pid as number;
    await waitFor(() => servingProcesses(supervisor).length === 2);
    const first = servingProcesses(supervisor);
    expect(first).toHaveLength(2);
    // A serving process dies; its replacement is held from its first moments (as a start waiting
    // for good would hold it): before, it kept its slot, starting, for ever.
    process.kill(first[0] as number, "SIGKILL");
    let stuck: number | undefined;
    await waitFor(() => {
      stuck = servingProcesses(supervisor).find((p) => !first.includes(p));
      return stuck !== undefined;
    }, 10_000);
    expect(stuck).toBeDefined();
    process.kill(stuck as number, "SIGSTOP");
    const killed = () => logLines(proc.stdout(), "a serving process did not start");
    await waitFor(() => killed().length > 0, 15_000);
    expect(killed()[0]?.worker_pid).toBe(stuck);
    expect(killed()[0]?.starting_ms).toBeGreaterThanOrEqual(5_000);
    expect(killed()[0]?.msg).toMatch(/^a serving process did not start in \d+ s; killing it$/);
    await waitFor(() => {
      const now = servingProcesses(supervisor);
      return now.length === 2 && !now.includes(stuck as number);
    }, 15_000);
    expect(servingProcesses(supervisor)).toHaveLength(2);
    expect(alive(stuck as number)).toBe(false);
    const listening = () => proc.stdout().match(/Server listening at/g)?.length ?? 0;
    await waitFor(() => listening() === 3, 15_000);
    expect(listening()).toBe(3);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);

  it("stops with the reason, and exit code 1, when its processes keep failing to start", async () => {
    const dir = dataDir();
    const { proc, smtpPort } = await failingToStart(dir, 2);
    expect(await proc.exited).toBe(1);
    expect(proc.stderr()).toContain(
      `herald failed to start: port ${smtpPort} on 127.0.0.1 is in use by another program (HERALD_SMTP_PORT)`,
    );
    expect(proc.stdout().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
    expect(logLines(proc.stdout(), "serving processes keep failing to start")).toHaveLength(1);
    // The database was stopped too.
    expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
    for (const pid of servingProcesses(proc.child.pid as number)) expect(alive(pid)).toBe(false);

    // It was a first start: the key and setup link it made are said as it stops (before, they
    // were never shown, and the next start, no first start, said nothing of them), once, and
    // in no log line. They work on the next start.
    expect(proc.stdout()).toContain(
      'This first start created the owner\'s account, the project "default" and an API key, and stopped before it served; they stay for the next start.',
    );
    const key = keyFrom(proc.stdout()) as string;
    expect(key).toMatch(/^hk_/);
    expect(proc.stdout().split(key)).toHaveLength(2);
    expect(proc.stderr()).not.toContain(key);
    expect(proc.stdout()).toMatch(/^HERALD_OWNER_SETUP_URL=http:\/\/127\.0\.0\.1:\d+\/setup#/m);
    const next = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    expect(next.stdout()).not.toContain("HERALD_API_KEY=");
    const res = await publisher(next, key, 10_000)("with the key of the failed start");
    expect(res.status).toBe(202);
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
  }, 60_000);

  it("says a first start's key as it stops, when stopped (Ctrl-C) before it serves", async () => {
    // Stopped while its processes retry.
    const { proc } = await failingToStart(dataDir(), 1);
    const died = () => logLines(proc.stdout(), "a serving process died while starting");
    await waitFor(() => died().length > 0, 20_000);
    expect(died()).toHaveLength(1);
    proc.child.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    const key = keyFrom(proc.stdout()) as string;
    expect(key).toMatch(/^hk_/);
    expect(proc.stdout().split(key)).toHaveLength(2);
    expect(proc.stdout()).toContain("and stopped before it served; they stay for the next start.");
    expect(proc.stdout().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
  }, 60_000);

  it.each([
    ["HERALD_PORT", "a plain socket", {}],
    // Another Herald's processes, say: our own sockets would share the port with it silently.
    ["HERALD_PORT", "an SO_REUSEPORT socket", { reusePort: true }],
    // Before, the serving processes' SMTP listeners failed after they served, and only logged it.
    ["HERALD_SMTP_PORT", "an SO_REUSEPORT socket", { reusePort: true }],
    // Before, found by each serving process after the first start made its key.
    ["HERALD_METRICS_PORT", "a plain socket", {}],
  ])(
    "stops at once, naming the port, when another program serves %s (%s)",
    async (variable, _, how) => {
      const taken: Server = createServer();
      const port = await new Promise<number>((resolve) =>
        taken.listen({ port: 0, host: "127.0.0.1", ...how }, () =>
          resolve((taken.address() as { port: number }).port),
        ),
      );
      const dir = dataDir();
      try {
        const proc = launchHerald({
          HERALD_DATA_DIR: dir,
          HERALD_PROCESSES: "2",
          [variable]: String(port),
        });
        expect(await proc.exited).toBe(1);
        expect(proc.stderr()).toContain(
          `herald failed to start: port ${port} on 127.0.0.1 is in use by another program (${variable})`,
        );
        expect(proc.stdout().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
        expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
        // Nothing was made before the port was found taken: started again, it is a first start
        // (before, the owner was made first, and the next start said no key or setup link).
        expect(proc.stdout()).not.toContain("HERALD_API_KEY=");
        await new Promise((resolve) => taken.close(resolve));
        const next = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
        expect(next.stdout()).toContain("First start: created the owner's account");
        expect(keyFrom(next.stdout())).toMatch(/^hk_/);
        next.child.kill("SIGTERM");
        expect(await next.exited).toBe(0);
      } finally {
        if (taken.listening) taken.close();
      }
    },
    60_000,
  );
});
