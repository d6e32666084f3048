/**
 * `npm run bench` stopped from outside mid-run leaves nothing running (issue "Run it unattended":
 * every process Herald starts is stopped by Herald, whatever signal arrives): a terminal closed
 * under it (SIGHUP) ends its server process, its fakes and its embedded PostgreSQL, removes its
 * scratch directory, and it exits as the signal would have ended it. Run to its end on a
 * PostgreSQL of one's own (DATABASE_URL), it drops every database it made there.
 */
import { chmodSync, readdirSync } from "node:fs";
import { constants } from "node:os";
import { describe, expect, inject, it } from "vitest";
import { bench } from "../helpers/bench.ts";
import { sql } from "../helpers/db.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive, descendants } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

const scratch = tempDir("herald-bench-stopped-");
// As the system's /tmp: run as root, the embedded PostgreSQL runs as `postgres` and reads there.
chmodSync(scratch, 0o1777);

describe("the benchmark stopped mid-run", () => {
  it("by a closed terminal (SIGHUP): every process it started ends, its scratch goes", async () => {
    const { child, exited, output } = bench(["--smoke"], { TMPDIR: scratch, DATABASE_URL: "" });
    // Set up and measuring: PostgreSQL, the server and the fakes are up.
    await waitFor(
      () => output().includes("1. publish over REST") || child.exitCode !== null,
      120_000,
    );
    expect(output()).toContain("1. publish over REST");
    const started = descendants(child.pid as number);
    // The server process, and PostgreSQL with its own processes.
    expect(started.some((r) => r.args.includes("scripts/bench/server.ts"))).toBe(true);
    expect(started.some((r) => /postgres -D .*herald-bench-/.test(r.args))).toBe(true);

    child.kill("SIGHUP");
    expect(await exited, output()).toBe(128 + constants.signals.SIGHUP);
    await waitFor(() => started.every((r) => !alive(r.pid)), 10_000);
    expect(started.filter((r) => alive(r.pid)).map((r) => r.args)).toEqual([]);
    expect(readdirSync(scratch).filter((n) => n.startsWith("herald-bench-"))).toEqual([]);
  }, 180_000);
});

describe("the benchmark on one's own PostgreSQL (DATABASE_URL)", () => {
  it("drops every database it made there, its servers' included", async () => {
    const server = inject("pgServerUrl");
    // Scenario 7 starts `npm start` on databases of its own, a run for each protocol. Its report
    // goes to the scratch directory: .bench/ holds a person's own last run.
    const { child, exited, output } = bench(["--smoke", "--only", "7"], {
      TMPDIR: scratch,
      DATABASE_URL: `${server}/postgres`,
      BENCH_OUT_DIR: scratch,
    });
    // This run's databases: its own (herald_bench_<pid>) and its servers' (herald_bench_…_<pid>).
    const databases = () =>
      sql<{ datname: string }>(
        `${server}/postgres`,
        "select datname from pg_database where datname like $1",
        [`herald_bench%_${child.pid}`],
      );
    const made = new Set<string>();
    const watching = setInterval(async () => {
      for (const r of await databases().catch(() => [])) made.add(r.datname);
    }, 200);
    const code = await exited;
    clearInterval(watching);
    expect(code, output()).toBe(0);
    expect(output()).toContain("CPU per publish, REST");
    // It did make some (the watch saw them), and left none.
    expect(made.size).toBeGreaterThan(0);
    expect(await databases()).toEqual([]);
  }, 180_000);
});
