import { spawnSync } from "node:child_process";
import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.ts";
import { loadPushTokenKeys } from "../../../src/ops/push-token-keys.ts";
import { loadVapidKeys } from "../../../src/ops/vapid-keys.ts";
import { tempDir } from "../../helpers/temp.ts";

/** The configuration read from `env`, with the data directory `dir`. */
const configIn = (dir: string, env: Record<string, string> = {}) =>
  loadConfig({ ...env, HERALD_DATA_DIR: dir });

describe("generated key files in the data directory", () => {
  it("are created with mode 0600, re-chmodded, and reused on the next start", () => {
    const dir = tempDir("herald-keys-");
    const first = loadPushTokenKeys(configIn(dir));
    const vapid = loadVapidKeys(configIn(dir));
    for (const f of ["token-keys.json", "vapid.json"]) {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      chmodSync(join(dir, f), 0o644);
    }
    const again = loadPushTokenKeys(configIn(dir));
    expect(again.ring.current.id).toBe(first.ring.current.id);
    expect(again.ring.open(first.ring.seal("token", "row"), "row")).toBe("token");
    expect(loadVapidKeys(configIn(dir)).publicKey).toBe(vapid.publicKey);
    for (const f of ["token-keys.json", "vapid.json"]) {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    }
  });
  it("are written whole: one a failed write cut short is not left to stop the next start", () => {
    const dir = tempDir("herald-keys-");
    // A first start whose writes fail past 40 bytes (the file size limit; a full disk alike).
    const keys = join(import.meta.dirname, "../../../src/ops/push-token-keys.ts");
    const first = spawnSync(
      "prlimit",
      ["--fsize=40", process.execPath, "--input-type=module", "-e"].concat(
        `const { loadPushTokenKeys } = await import(${JSON.stringify(keys)});
         loadPushTokenKeys({ dataDir: ${JSON.stringify(dir)} });`,
      ),
      { encoding: "utf8" },
    );
    expect(first.status).toBe(1);
    expect(first.stderr).toContain(
      `cannot write the generated key file ${join(dir, "token-keys.json")} (EFBIG`,
    );
    expect(readdirSync(dir)).toEqual([]);
    // Before: token-keys.json was left with its first 40 bytes, and this threw at its JSON.
    const next = loadPushTokenKeys(configIn(dir));
    expect(next.ring.open(next.ring.seal("token", "row"), "row")).toBe("token");
    expect(readdirSync(dir)).toEqual(["token-keys.json"]);
  });
  it("come from the environment when configured, newest key first", () => {
    const k = (b: number) => Buffer.alloc(32, b).toString("base64");
    const { ring, source } = loadPushTokenKeys(
      configIn("/nonexistent", {
        HERALD_TOKEN_KEYS: `new:${k(2)},old:${k(1)}`,
        HERALD_TOKEN_INDEX_KEY: k(3),
      }),
    );
    expect(source).toBe("HERALD_TOKEN_KEYS");
    expect(ring.keys.map((x) => x.id)).toEqual(["new", "old"]);
    expect(() =>
      loadPushTokenKeys(configIn("/nonexistent", { HERALD_TOKEN_KEYS: `a:${k(1)}` })),
    ).toThrow(/INDEX_KEY/);
  });
});
