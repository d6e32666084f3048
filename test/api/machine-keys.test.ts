/**
 * Two machines on one database (docs/operations.md, "Keys"): a second `npm start` with keys of
 * its own (its own data directory) is refused at start, saying which keys differ and what to do,
 * instead of sealing push tokens and secrets the first cannot open. Given the first's key files
 * it starts; a rotation (a new key in front of the ring) starts too. Keys lost for good: `npm
 * run accept-new-keys` makes a machine's keys the database's, and the old ones are refused.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshDatabase } from "../helpers/db.ts";
import { type HeraldProcess, launchHerald, runOperator, spawnHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

async function startsAndStops(proc: Promise<HeraldProcess>): Promise<void> {
  const p = await proc;
  p.child.kill("SIGTERM");
  expect(await p.exited).toBe(0);
}

async function refused(env: Record<string, string>): Promise<string> {
  const p = launchHerald(env);
  expect(await p.exited).toBe(1);
  return p.stderr();
}

describe("a machine's keys against its database's", () => {
  it("refuses another machine's keys, takes the same keys and a rotation, and accepts new ones when told", async () => {
    const db = await freshDatabase();
    const machine = (dir: string, more: Record<string, string> = {}) => ({
      DATABASE_URL: db,
      HERALD_DATA_DIR: dir,
      HERALD_PROCESSES: "1",
      ...more,
    });
    const a = tempDir("herald-machine-a-");
    await startsAndStops(spawnHerald(machine(a)));

    // A second machine with keys of its own.
    const b = tempDir("herald-machine-b-");
    const said = await refused(machine(b));
    expect(said).toMatch(
      /herald failed to start: this machine's keys are not the ones this database's push tokens and secrets were sealed with \(token key k\d{8}, the index key, the VAPID key differ from the database's\): give it the keys of the machine that first used this database \(token-keys.json and vapid.json in .*herald-machine-b-/,
    );
    expect(said).toContain("npm run accept-new-keys");

    // Given the first machine's key files, it starts.
    for (const f of ["token-keys.json", "vapid.json"]) copyFileSync(join(a, f), join(b, f));
    await startsAndStops(spawnHerald(machine(b)));

    // A rotation: a new key in front of the first machine's ring, given in the environment.
    const ring = JSON.parse(readFileSync(join(a, "token-keys.json"), "utf8")) as {
      keys: string;
      indexKey: string;
    };
    const rotated = {
      HERALD_TOKEN_KEYS: `k2099:${Buffer.alloc(32, 7).toString("base64")},${ring.keys}`,
      HERALD_TOKEN_INDEX_KEY: ring.indexKey,
    };
    await startsAndStops(spawnHerald(machine(b, rotated)));

    // Keys lost for good: a third machine's are accepted by the operator, then the old refused.
    const c = tempDir("herald-machine-c-");
    expect(await refused(machine(c))).toContain("this machine's keys are not the ones");
    const accept = await runOperator(["ops/accept-new-keys"], machine(c));
    expect(accept.status, accept.stderr).toBe(0);
    expect(accept.stdout).toContain("This machine's keys are now the database's");
    await startsAndStops(spawnHerald(machine(c)));
    expect(await refused(machine(a))).toContain("this machine's keys are not the ones");
  }, 120_000);
});
