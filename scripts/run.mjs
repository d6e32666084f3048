// The entry of `npm start` and of the operator's commands (`npm run owner:reset-password`, …):
// plain JavaScript that any Node runs, so that an old Node is told so in one line; then the
// server's build in dist/server/ (made by npm install), rebuilt first if src/ or gen/ changed
// since; then the named entry of the build, in this process.
//
//   node scripts/run.mjs main | ops/owner-setup-link | ops/reencrypt-tokens | ops/backup | …
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { holdBuild } from "./running-builds.mjs";

const require = createRequire(import.meta.url);
require("./check-node.cjs");

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist/server");

/** The newest modification time of a .ts file under `dir` (0 without one: an image ships none). */
function newest(dir) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts")) {
      latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return latest;
}

const stamp = join(dist, ".built");
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built < Math.max(newest(join(root, "src")), newest(join(root, "gen")))) {
  process.stderr.write(built ? "src/ changed: building the server…\n" : "building the server…\n");
  const build = spawnSync(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", join(root, "scripts/build-server.ts")],
    { stdio: "inherit" },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const entry = process.argv[2] ?? "main";
process.argv.splice(2, 1);
// The build dist/server points to now, kept for this process however often it is rebuilt
// meanwhile: its serving processes, started later, load the same files (running-builds.mjs).
const build = realpathSync(dist);
holdBuild(build);
await import(pathToFileURL(join(build, "src", `${entry}.js`)).href);
