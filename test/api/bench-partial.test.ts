/**
 * `npm run bench -- --only …` runs some scenarios; a figure that needs one it did not run says
 * so, instead of printing NaN (scenario 5's share of the limits is of scenario 1's maximum).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { tempDir } from "../helpers/temp.ts";

const root = join(import.meta.dirname, "../..");

describe("a benchmark run of some scenarios", () => {
  it("says which figure needs a scenario it did not run, and prints no NaN", () => {
    const r = spawnSync(
      process.execPath,
      [
        "--experimental-strip-types",
        "--no-warnings",
        "scripts/bench/main.ts",
        "--smoke",
        "--only",
        "5",
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: `${inject("pgServerUrl")}/postgres`,
          BENCH_OUT_DIR: tempDir("herald-bench-partial-"),
        },
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).toContain("bare Fastify route from memory");
    expect(out).toMatch(/share of the limits: not in this run: .*scenario 1's/);
    expect(out).not.toMatch(/NaN/);
  }, 150_000);
});
