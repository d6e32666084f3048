/**
 * The operator's commands beside a running server (issue "Run it unattended"): they use the
 * server's embedded PostgreSQL, found through the data directory, and never stop it; with no
 * server running they start their own and stop it; a second `npm start` on the same data
 * directory refuses instead of taking the first one's database.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { launchHerald, runOperator, spawnHerald, waitForKey } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive } from "../helpers/tree.ts";

const operator = (dir: string, command: string) =>
  runOperator([command], { DATABASE_URL: "", HERALD_DATA_DIR: dir });

const postmaster = (dir: string) =>
  Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);

describe("operator commands", () => {
  it("use the running server's database and leave it running", async () => {
    const dir = tempDir("herald-ops-");
    const server = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    const key = await waitForKey(server);
    const pg = postmaster(dir);

    const link = await operator(dir, "ops/owner-setup-link");
    expect(link.status, link.stderr).toBe(0);
    expect(link.stdout).toMatch(
      /HERALD_OWNER_SETUP_URL=http:\/\/127\.0\.0\.1:8080\/setup#[\w-]{32}/,
    );
    const reencrypt = await operator(dir, "ops/reencrypt-tokens");
    expect(reencrypt.status, reencrypt.stderr).toBe(0);
    expect(reencrypt.stdout).toMatch(/^re-encrypted 0 push token\(s\) under key /);

    // The server's PostgreSQL is the same one, and the server still answers.
    expect(alive(pg)).toBe(true);
    expect(postmaster(dir)).toBe(pg);
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ title: "after the operator" }),
    });
    expect(res.status).toBe(202);

    // A second server on the same data directory says why it cannot start.
    const second = launchHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(
      `herald failed to start: Herald (pid ${server.child.pid}) already runs on ${dir}`,
    );
    expect(alive(pg)).toBe(true);

    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(alive(pg)).toBe(false);

    // No server: the command starts its own PostgreSQL and stops it.
    const alone = await operator(dir, "ops/owner-setup-link");
    expect(alone.status, alone.stderr).toBe(0);
    expect(alone.stdout).toContain("HERALD_OWNER_SETUP_URL=");
    expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
    expect(existsSync(join(dir, "postgres.owner"))).toBe(false);
  }, 90_000);
});
