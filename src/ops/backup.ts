/**
 * `npm run backup -- FILE`: a consistent archive of this Herald while it runs (or while it does
 * not): every table from one database snapshot (db/backup.ts), and the key files of the data
 * directory without which the copy is worth little: `token-keys.json` (opens every stored push
 * token) and `vapid.json` (every browser subscription is bound to it). Keys given in the
 * environment (HERALD_TOKEN_KEYS, HERALD_VAPID_*) are not in the archive: keep them where they
 * live. The archive holds secrets: it is written with mode 0600. docs/operations.md, "Backups".
 */
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig } from "../config.ts";
import { dumpTables } from "../db/index.ts";
import { writeArchive } from "./archive.ts";
import { commandDatabase } from "./database.ts";
import { interrupted, onInterrupt } from "./interrupt.ts";
import { backupFormat, keyFiles } from "./restore-plan.ts";
import { scratchOrExit } from "./scratch.ts";

const target = process.argv[2];
if (!target) {
  process.stderr.write("usage: npm run backup -- FILE   (a .tar.gz archive of this Herald)\n");
  process.exit(2);
}
const file = resolve(target);
const config = loadConfig();
// The tables' copy holds what the archive holds: a failed or interrupted backup leaves neither.
const scratch = scratchOrExit("herald-backup-", "backup");
const work = scratch.path;
const dropPartial = () => rmSync(`${file}.partial`, { force: true });
onInterrupt(dropPartial);
try {
  const db = await commandDatabase(config);
  const dump = await dumpTables(db.url, work).finally(() => db.stop());
  const keys = keyFiles.filter((k) => existsSync(join(config.dataDir, k)));
  const manifest = {
    format: backupFormat,
    created_at: new Date().toISOString(),
    database: config.databaseUrl ? "DATABASE_URL" : "embedded",
    ...dump,
    keys,
  };
  writeFileSync(join(work, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeArchive(`${file}.partial`, [
    ["manifest.json", join(work, "manifest.json")],
    ...keys.map((k): [string, string] => [`keys/${k}`, join(config.dataDir, k)]),
    ...dump.tables.map((t): [string, string] => [
      `tables/${t.name}.copy`,
      join(work, `${t.name}.copy`),
    ]),
  ]).catch((err: Error) => {
    throw new Error(`writing ${file}: ${err.message}`);
  });
  renameSync(`${file}.partial`, file);
  const missing = keyFiles.filter((k) => !keys.includes(k));
  process.stdout.write(
    `Backed up ${dump.tables.length} tables and ${keys.length} key file(s) to ${file}\n` +
      (missing.length > 0
        ? `Not in the archive (they come from the environment, or were never made): ${missing.join(", ")}\n`
        : "") +
      "It holds secrets (the key files): keep it as you keep the keys.\n",
  );
} catch (err) {
  dropPartial();
  if (!interrupted()) process.stderr.write(`backup failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  scratch.remove();
}
