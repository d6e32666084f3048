/**
 * `npm run bench -- --only …` runs some scenarios; a figure that needs one it did not run says
 * so, instead of printing NaN (scenario 5's share of the limits is of scenario 1's maximum).
 */
import { describe, expect, inject, it } from "vitest";
import { bench } from "../helpers/bench.ts";
import { tempDir } from "../helpers/temp.ts";

describe("a benchmark run of some scenarios", () => {
  it("says which figure needs a scenario it did not run, and prints no NaN", async () => {
    const { exited, output } = bench(["--smoke", "--only", "5"], {
      DATABASE_URL: `${inject("pgServerUrl")}/postgres`,
      BENCH_OUT_DIR: tempDir("herald-bench-partial-"),
    });
    const code = await exited;
    const out = output();
    expect(code, out).toBe(0);
    expect(out).toContain("bare Fastify route from memory");
    expect(out).toMatch(/share of the limits: not in this run: .*scenario 1's/);
    expect(out).not.toMatch(/NaN/);
  }, 150_000);
});
