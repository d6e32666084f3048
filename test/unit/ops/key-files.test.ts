import { chmodSync, statSync } from "node:fs";
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
