/**
 * The data directory's errors say which setting and what is wrong, in a person's words: a file
 * in its place, or a file on its path, named with HERALD_DATA_DIR (Node said `EEXIST: file
 * already exists, mkdir`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeDataDir, makeFolders } from "../../src/data-dir.ts";

const dir = mkdtempSync(join(tmpdir(), "herald-data-dir-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("makeDataDir", () => {
  it("makes a missing folder and its parents, and leaves one that exists", () => {
    const nested = join(dir, "a", "b");
    makeDataDir(nested);
    makeDataDir(nested);
    expect(statSync(nested).isDirectory()).toBe(true);
  });

  it("names the setting and the trouble when a file is in the way", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    for (const path of [file, join(file, "below")]) {
      expect(() => makeDataDir(path)).toThrow(
        `the data directory ${path} (HERALD_DATA_DIR) cannot be made: a file is in the way (it or a folder on its path is not a folder)`,
      );
    }
  });

  it("ends with an error where a folder cannot hold another (under /proc), not in a loop", () => {
    // In a process of its own: the loop it replaced was synchronous, deaf to a test's timeout.
    const program = `import("${join(import.meta.dirname, "../../src/data-dir.ts")}").then((m) => {
      try { m.makeDataDir("/proc/herald-data"); } catch (e) { console.log(e.message); }
    });`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", program], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(run.signal).toBeNull();
    expect(run.stdout).toMatch(
      /^the data directory \/proc\/herald-data \(HERALD_DATA_DIR\) cannot be made: /,
    );
  });

  it("makeFolders gives each folder it makes the mode asked for, and leaves those that exist", () => {
    const kept = join(dir, "kept");
    mkdirSync(kept, { mode: 0o755 });
    const top = join(kept, "modes");
    makeFolders(join(top, "x", "y"), 0o700);
    for (const d of [top, join(top, "x"), join(top, "x", "y")]) {
      expect((statSync(d).mode & 0o777).toString(8)).toBe("700");
    }
    expect((statSync(kept).mode & 0o777).toString(8)).toBe("755");
  });
});
