import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  reachableBinaries,
  reachableByOthers,
  relocatedClusterDir,
} from "../../../../src/db/embedded/user.ts";
import { tempDir } from "../../../helpers/temp.ts";

/** A directory of mode 0700 (like root's home) with a fake PostgreSQL install inside. */
function closedHome(): { home: string; native: string } {
  const home = tempDir("herald-home-");
  chmodSync(home, 0o700);
  const native = join(home, "checkout", "node_modules", "native");
  mkdirSync(join(native, "bin"), { recursive: true });
  writeFileSync(join(native, "bin", "postgres"), "#!/bin/sh\n", { mode: 0o755 });
  return { home, native };
}

describe("the embedded cluster as root", () => {
  it("sees that a path under a 0700 directory is out of another user's reach", () => {
    const { home, native } = closedHome();
    expect(reachableByOthers(join(native, "bin", "postgres"))).toBe(false);
    chmodSync(home, 0o711);
    expect(reachableByOthers(join(native, "bin", "postgres"))).toBe(true);
  });
  it("copies unreachable binaries once per version to a reachable place", () => {
    const { native } = closedHome();
    const parent = tempDir("herald-var-");
    chmodSync(parent, 0o755);
    const target = join(parent, "lib", "herald");
    const copy = reachableBinaries(native, "18.4", target);
    expect(copy).toBe(join(target, "postgres-18.4"));
    expect(existsSync(join(copy, "bin", "postgres"))).toBe(true);
    expect(reachableByOthers(join(copy, "bin", "postgres"))).toBe(true);
    expect(reachableBinaries(native, "18.4", target)).toBe(copy);
  });
  it("keeps reachable binaries where they are", () => {
    const { home, native } = closedHome();
    chmodSync(home, 0o755);
    expect(reachableBinaries(native, "18.4", "/nonexistent")).toBe(native);
  });
  it("names a relocated cluster after its data directory", () => {
    expect(relocatedClusterDir("/root/app/.herald", "/var/lib/herald")).toMatch(
      /^\/var\/lib\/herald\/clusters\/[0-9a-f]{16}$/,
    );
    expect(relocatedClusterDir("/root/a")).not.toBe(relocatedClusterDir("/root/b"));
  });
});
