/**
 * A file a setting names that cannot be read (an APNs key not copied yet, a certificate in
 * another folder) stops `npm start` at once, naming the variable, the path and why, before any
 * serving process starts. Before, each serving process died at start with a stack until the
 * supervisor gave up, on Node's `ENOENT: no such file or directory, open …`.
 */
import { describe, expect, it } from "vitest";
import { launchHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const apns = {
  HERALD_APNS_KEY_ID: "ABC1234567",
  HERALD_APNS_TEAM_ID: "TEAM123456",
  HERALD_APNS_BUNDLE_ID: "dev.herald.app",
};

describe("files named by the settings", () => {
  it("stop the start, naming the variable, when one cannot be read", async () => {
    const dir = tempDir("herald-setting-files-");
    const missing = launchHerald({
      HERALD_DATA_DIR: dir,
      HERALD_APNS_KEY_FILE: `${dir}/AuthKey.p8`,
      ...apns,
    });
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toContain(
      `herald failed to start: HERALD_APNS_KEY_FILE names ${dir}/AuthKey.p8, which cannot be read: there is no such file`,
    );
    expect(missing.stdout()).not.toContain("serving process");

    const folder = launchHerald({
      HERALD_DATA_DIR: dir,
      HERALD_SMTP_PORT: "2599",
      HERALD_SMTP_TLS_KEY: dir,
      HERALD_SMTP_TLS_CERT: dir,
    });
    expect(await folder.exited).toBe(1);
    expect(folder.stderr()).toContain(
      `herald failed to start: HERALD_SMTP_TLS_KEY names ${dir}, which cannot be read: it is a folder`,
    );
  }, 60_000);
});
