/**
 * Herald's own folder, the one holding its package.json (and docs/, web/dist/), found by walking
 * up from wherever this code runs: src/ as TypeScript, or a chunk of the build under
 * dist/server/src/chunks/.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

export const packageRoot = findRoot(import.meta.dirname);

/** This build's version (package.json's), which the server says when it starts and in /metrics. */
export const packageVersion: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8"));
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
})();
