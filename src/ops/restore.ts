/**
 * `npm run restore -- FILE`: brings back an archive of `npm run backup` into a new data
 * directory (HERALD_DATA_DIR, with its own embedded PostgreSQL) or into an empty DATABASE_URL:
 * the key files first, then the schema as it was when copied, the rows, then the migrations
 * this Herald has that the archive's did not. Notifications, devices (their tokens open with
 * the restored keys), API keys, webhooks: all as they were. It refuses to write over anything.
 */
import { copyFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig } from "../config.ts";
import { makeDataDir } from "../data-dir.ts";
import { hasAccounts, loadTables, openDatabase } from "../db/index.ts";
import { extractArchive } from "./archive.ts";
import { commandDatabase } from "./database.ts";
import { interrupted, onInterrupt } from "./interrupt.ts";
import { type BackupManifest, refusal } from "./restore-plan.ts";
import { scratchOrExit } from "./scratch.ts";

const source = process.argv[2];
if (!source) {
  process.stderr.write("usage: npm run restore -- FILE   (an archive of npm run backup)\n");
  process.exit(2);
}
const config = loadConfig();
const scratch = scratchOrExit("herald-restore-", "restore");
const work = scratch.path;
// What this restore made (the data directory if it was not there, a cluster it initialised, the
// key files it copied) goes again if it fails or is interrupted, its database stopped first: a
// retry then meets no half of it ("already has a database"). Nothing that was there before.
const made: string[] = [];
const unmake = () => {
  for (const path of made.splice(0).reverse()) rmSync(path, { recursive: true, force: true });
};
onInterrupt(unmake);
if (!existsSync(config.dataDir)) made.push(config.dataDir);
try {
  await extractArchive(resolve(source), work).catch((err: Error) => {
    throw new Error(`unpacking the archive into ${work}: ${err.message}`);
  });
  const manifest = JSON.parse(readFileSync(join(work, "manifest.json"), "utf8")) as BackupManifest;
  const refused = refusal(manifest, config.dataDir);
  if (refused) throw new Error(refused);
  if (!config.databaseUrl && existsSync(join(config.dataDir, "pg", "PG_VERSION"))) {
    throw new Error(`${config.dataDir} already has a database: restore into a new data directory`);
  }
  const db = await commandDatabase(config);
  if ("initialized" in db && db.initialized) made.push(db.clusterDir);
  try {
    const last = manifest.migrations.at(-1);
    const asCopied = await openDatabase({
      url: db.url,
      poolSize: 1,
      ...(last && { migrateTo: last }),
    });
    await asCopied.close();
    if (await hasAccounts(db.url)) {
      throw new Error("the database is not empty: restore into an empty one");
    }
    makeDataDir(config.dataDir);
    for (const k of manifest.keys) {
      made.push(join(config.dataDir, k));
      copyFileSync(join(work, "keys", k), join(config.dataDir, k));
    }
    await loadTables(db.url, join(work, "tables"), manifest.tables);
    await (await openDatabase({ url: db.url, poolSize: 1 })).close();
  } finally {
    await db.stop();
  }
  made.length = 0; // restored: all of it stays
  process.stdout.write(
    `Restored the backup of ${manifest.created_at} (${manifest.tables.length} tables, ${manifest.keys.length} key file(s)) into ${config.databaseUrl ? "DATABASE_URL" : config.dataDir}\n` +
      "Start Herald on it with npm start.\n",
  );
} catch (err) {
  if (!interrupted()) process.stderr.write(`restore failed: ${(err as Error).message}\n`);
  unmake();
  process.exitCode = 1;
} finally {
  scratch.remove();
}
