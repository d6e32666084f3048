/**
 * An embedded PostgreSQL that will not start says why, in its own words, where the start said
 * only "PostgreSQL exited with 1 while starting" and the reason waited in postgres.log: here a
 * data directory made by another PostgreSQL version (as after an upgrade that changed it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { launchHerald, spawnHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

describe("an embedded PostgreSQL that exits as it starts", () => {
  it("stops the start with PostgreSQL's reason", async () => {
    const dir = tempDir("herald-embedded-version-");
    const first = await spawnHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const versionFile = join(dir, "pg", "PG_VERSION");
    const version = Number(readFileSync(versionFile, "utf8"));
    writeFileSync(versionFile, `${version - 1}\n`);

    const again = launchHerald({ HERALD_DATA_DIR: dir, HERALD_PROCESSES: "1" });
    expect(await again.exited).toBe(1);
    expect(again.stderr()).toMatch(
      new RegExp(
        `herald failed to start: PostgreSQL exited with 1 while starting: database files are incompatible with server\\. The data directory was initialized by PostgreSQL version ${version - 1}, which is not compatible with this version ${version}\\.`,
      ),
    );
    expect(again.stdout().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
  }, 60_000);
});
