/**
 * Compiles the server (src/ and gen/) to JavaScript with TypeScript, so that `npm start` and the
 * operator's commands run plain JavaScript: no type stripping at run time (it costs each process
 * memory and start-up time). Run by `npm install` (postinstall), by the test setup, and by
 * scripts/run.mjs when src/ changed since the last build.
 *
 * Each build goes to a folder of its own (dist/server-<time>), and `dist/server` is switched to it
 * in one step (a symlink renamed over the old one): a server that runs while `npm ci` rebuilds
 * (an upgrade) keeps its own tree, so a serving process it starts meanwhile never loads half of
 * one build and half of another. The previous build is kept for that server; older ones go.
 *
 *   node scripts/build-server.ts
 */
import { execFileSync } from "node:child_process";
import {
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const dist = join(root, "dist");
export const serverDist = join(dist, "server");

/** The build `dist/server` points to now, if it is a link (an older layout was a folder). */
function current(): string | undefined {
  try {
    return lstatSync(serverDist).isSymbolicLink() ? readlinkSync(serverDist) : undefined;
  } catch {
    return undefined;
  }
}

export function buildServer(): void {
  const previous = current();
  const name = `server-${Date.now()}`;
  const out = join(dist, name);
  const require = createRequire(import.meta.url);
  const tsc = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.server.json"), "--outDir", out], {
    stdio: "inherit",
  });
  // What scripts/run.mjs compares src/ against.
  writeFileSync(join(out, ".built"), `${new Date().toISOString()}\n`);
  const link = join(dist, `.server-${process.pid}`);
  symlinkSync(name, link);
  if (previous === undefined) rmSync(serverDist, { recursive: true, force: true });
  renameSync(link, serverDist);
  for (const entry of readdirSync(dist)) {
    if (/^server-\d+$/.test(entry) && entry !== name && entry !== basename(previous ?? "")) {
      rmSync(join(dist, entry), { recursive: true, force: true });
    }
  }
}

if (import.meta.main) buildServer();
