/**
 * A server that runs while its build is made again, twice (an upgrade's `npm ci`, then `npm test`
 * or a change to src/, in the same checkout): it keeps the build it started from, so the serving
 * process it starts after a crash loads the files the others run. Before, the second build
 * removed them, and every replacement died on start with "Cannot find module", for good.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildServer } from "../../scripts/build-server.ts";
import { freshDatabase } from "../helpers/db.ts";
import { spawnHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { servingProcesses } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

/** The build a process runs: the folder above the src/main.js on its command line. */
const buildOf = (pid: number) => {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const main = argv.find((a) => a.endsWith("/src/main.js")) as string;
  return dirname(dirname(main));
};

describe("a server whose build is made again while it runs", () => {
  it("replaces a serving process that dies after two builds, from its own build", async () => {
    const proc = await spawnHerald({
      DATABASE_URL: await freshDatabase(),
      HERALD_BOOTSTRAP: "1",
      HERALD_PROCESSES: "1",
      HERALD_DATA_DIR: tempDir("herald-rebuilt-"),
    });
    const supervisor = proc.child.pid as number;
    await waitFor(() => servingProcesses(supervisor).length === 1);
    const [first] = servingProcesses(supervisor) as [number];
    const build = buildOf(first);
    expect(existsSync(join(build, ".built"))).toBe(true);

    await buildServer();
    await buildServer();
    expect(existsSync(join(build, "src", "main.js"))).toBe(true);

    process.kill(first, "SIGKILL");
    await waitFor(async () => {
      const now = servingProcesses(supervisor);
      if (now.length !== 1 || now.includes(first)) return false;
      return fetch(`${proc.url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    }, 20_000);
    const [replacement] = servingProcesses(supervisor) as [number];
    expect(replacement).not.toBe(first);
    expect(buildOf(replacement)).toBe(build);
    expect(proc.stdout()).toContain("a serving process died while serving (signal SIGKILL)");
    expect(proc.stdout()).not.toContain("died while starting");

    // Stopped, it no longer holds its build: the next build may remove it.
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(existsSync(join(build, ".running", String(supervisor)))).toBe(false);
  }, 60_000);
});
