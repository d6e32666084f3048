/**
 * The listens running on a machine, as the device's topic filter is set from them: a killed
 * one's record does not hold the filter wide (or narrow) for ever.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runningListens, unionOf } from "../../../src/cli/running-listens.ts";
import { tempDir } from "../../helpers/temp.ts";

describe("running listens", () => {
  it("are this process's until they leave; a dead process's record is dropped", () => {
    const config = join(tempDir("herald-listens-"), "config.json");
    const a = runningListens(config, "dev-1");
    const b = runningListens(config, "dev-1");
    const other = runningListens(config, "dev-2");
    a.enter(["deploys"]);
    b.enter([]);
    other.enter(["ci"]);
    expect(a.live().sort()).toEqual([[], ["deploys"]]);
    // A listen killed with SIGKILL leaves its record: its process is gone.
    const dead = spawnSync("true").pid as number;
    const dir = join(config, "..", "listens");
    const stale = join(dir, `dev-1.${dead}.0badf00d.json`);
    writeFileSync(stale, '{"topics":["old"]}\n');
    expect(a.live().sort()).toEqual([[], ["deploys"]]);
    expect(existsSync(stale)).toBe(false);
    b.leave();
    expect(a.live()).toEqual([["deploys"]]);
    a.leave();
    expect(a.live()).toEqual([]);
    expect(readdirSync(dir)).toHaveLength(1); // dev-2's
  });

  it("need every topic when one of them does", () => {
    expect(unionOf([["a"], ["b", "a"]])).toEqual(["a", "b"]);
    expect(unionOf([["a"], []])).toEqual([]);
    expect(unionOf([])).toEqual([]);
  });
});
