/** What a backup archive holds and what a restore checks before it writes anything. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { DumpManifest } from "../db/index.ts";
import { migrations } from "../db/index.ts";

/** The archive layout's version: a restore refuses one it does not know. */
export const backupFormat = 1;

/** The data directory's key files a backup carries (docs/operations.md, "Backups"). */
export const keyFiles = ["token-keys.json", "vapid.json"] as const;

export interface BackupManifest extends DumpManifest {
  format: number;
  created_at: string;
  keys: string[];
}

/** Why this archive cannot be restored into this data directory, or undefined when it can. */
export function refusal(manifest: BackupManifest, dataDir: string): string | undefined {
  if (manifest.format !== backupFormat) {
    return `this archive's format (${manifest.format}) is not one this Herald reads (${backupFormat})`;
  }
  const known = migrations.map((m) => m.name);
  const unknown = manifest.migrations.filter((m) => !known.includes(m));
  if (unknown.length > 0) {
    return `the archive was made by a newer Herald (migrations ${unknown.join(", ")}): update Herald first`;
  }
  for (const k of manifest.keys) {
    if (existsSync(join(dataDir, k))) {
      return `${join(dataDir, k)} exists: restore into a new data directory (HERALD_DATA_DIR)`;
    }
  }
  return undefined;
}
