/**
 * The listens running on a machine, as the device's topic filter is set from them: a killed
 * one's record does not hold the filter wide (or narrow) for ever.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
    const record = (name: string, r: object) => {
      writeFileSync(join(dir, `dev-1.${name}.json`), `${JSON.stringify(r)}\n`);
      return join(dir, `dev-1.${name}.json`);
    };
    const stale = record("dead", { topics: ["old"], pid: dead });
    // Another listen, in a process of its own, started when its record says.
    const sleeper = spawn("sleep", ["30"]);
    const started = (pid: number) => {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    };
    const pid = sleeper.pid as number;
    try {
      const running = record("running", { topics: ["ci"], pid, start: started(pid) });
      // Its id since taken by another program, started at another time: a killed listen's.
      const reused = record("reused", { topics: ["older"], pid, start: "1" });
      expect(a.live().sort()).toEqual([[], ["ci"], ["deploys"]]);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(reused)).toBe(false);
      rmSync(running);
    } finally {
      sleeper.kill();
    }
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
