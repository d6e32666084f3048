#!/usr/bin/env node
// The installed `herald` command. Node runs the TypeScript sources directly (type stripping,
// on by default from Node 22.18 and 23.6); on older 22.x it re-runs itself with the flag.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../src/cli/entry.ts", import.meta.url));
if (process.features.typescript) {
  await import(entry);
} else {
  const r = spawnSync(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", entry, ...process.argv.slice(2)],
    {
      stdio: "inherit",
    },
  );
  process.exit(r.status ?? 1);
}
