/**
 * `npm run bench` stopped from outside mid-run leaves nothing running (issue "Run it unattended":
 * every process Herald starts is stopped by Herald, whatever signal arrives): a terminal closed
 * under it (SIGHUP) ends its server process, its fakes and its embedded PostgreSQL, removes its
 * scratch directory, and it exits as the signal would have ended it. Run to its end on a
 * PostgreSQL of one's own (DATABASE_URL), it drops every database it made there.
 */
import { spawn } from "node:child_process";
import { chmodSync, readdirSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive, descendants } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

const root = join(import.meta.dirname, "../..");
const scratch = tempDir("herald-bench-stopped-");
// As the system's /tmp: run as root, the embedded PostgreSQL runs as `postgres` and reads there.
chmodSync(scratch, 0o1777);

describe("the benchmark stopped mid-run", () => {
  it("by a closed terminal (SIGHUP): every process it started ends, its scratch goes", async () => {
    const bench = spawn(
      process.execPath,
      ["--experimental-strip-types", "--no-warnings", "scripts/bench/main.ts", "--smoke"],
      {
        cwd: root,
        env: { ...process.env, DATABASE_URL: "", TMPDIR: scratch },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    bench.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    bench.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => bench.once("exit", (code) => r(code)));
    // Set up and measuring: PostgreSQL, the server and the fakes are up.
    await waitFor(() => out.includes("1. publish over REST") || bench.exitCode !== null, 120_000);
    expect(out).toContain("1. publish over REST");
    const started = descendants(bench.pid as number);
    // The server process, and PostgreSQL with its own processes.
    expect(started.some((r) => r.args.includes("scripts/bench/server.ts"))).toBe(true);
    expect(started.some((r) => /postgres -D .*herald-bench-/.test(r.args))).toBe(true);

    bench.kill("SIGHUP");
    expect(await exited, out).toBe(128 + constants.signals.SIGHUP);
    await waitFor(() => started.every((r) => !alive(r.pid)), 10_000);
    expect(started.filter((r) => alive(r.pid)).map((r) => r.args)).toEqual([]);
    expect(readdirSync(scratch).filter((n) => n.startsWith("herald-bench-"))).toEqual([]);
  }, 180_000);
});

describe("the benchmark on one's own PostgreSQL (DATABASE_URL)", () => {
  it("drops every database it made there, its servers' included", async () => {
    const server = inject("pgServerUrl");
    // Scenario 7 starts `npm start` on databases of its own, a run for each protocol.
    const bench = spawn(
      process.execPath,
      [
        "--experimental-strip-types",
        "--no-warnings",
        "scripts/bench/main.ts",
        "--smoke",
        "--only",
        "7",
      ],
      {
        cwd: root,
        // Its report goes to the scratch directory: .bench/ holds a person's own last run.
        env: {
          ...process.env,
          DATABASE_URL: `${server}/postgres`,
          TMPDIR: scratch,
          BENCH_OUT_DIR: scratch,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    bench.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    bench.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const made = new Set<string>();
    const watching = setInterval(async () => {
      const rows = await sql<{ datname: string }>(
        `${server}/postgres`,
        "select datname from pg_database where datname like $1",
        [`herald_bench_%_${bench.pid}`],
      ).catch(() => []);
      for (const r of rows) made.add(r.datname);
    }, 200);
    const code = await new Promise<number | null>((r) => bench.once("exit", (c) => r(c)));
    clearInterval(watching);
    expect(code, out).toBe(0);
    expect(out).toContain("CPU per publish, REST");
    // It did make some (the watch saw them), and left none.
    expect(made.size).toBeGreaterThan(0);
    const left = await sql(
      `${server}/postgres`,
      "select datname from pg_database where datname like $1",
      [`herald_bench%_${bench.pid}`],
    );
    expect(left).toEqual([]);
  }, 180_000);
});
