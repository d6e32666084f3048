/**
 * Key material generated on first start into the data directory (the embedded default, where
 * no secret store is configured): written with mode 0600 and re-chmodded at every start, so a
 * copy or a restore that loosened it is tightened again.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { makeDataDir } from "../data-dir.ts";
import { createWhole } from "../whole-file.ts";

export function readOrCreateSecretFile<T>(
  dataDir: string,
  name: string,
  generate: () => T,
): { file: string; value: T } {
  const file = join(dataDir, name);
  if (!existsSync(file)) {
    makeDataDir(dataDir);
    // Whole or not at all: one cut short by a full disk stopped every later start at its JSON.
    try {
      createWhole(file, `${JSON.stringify(generate(), null, 2)}\n`, 0o600);
    } catch (err) {
      throw new Error(
        `cannot write the generated key file ${file} (${(err as Error).message}); nothing was left there: free space or fix the folder, and start again`,
      );
    }
  }
  chmodSync(file, 0o600);
  return { file, value: JSON.parse(readFileSync(file, "utf8")) as T };
}
