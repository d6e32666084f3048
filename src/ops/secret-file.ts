/**
 * Key material generated on first start into the data directory (the embedded default, where
 * no secret store is configured): written with mode 0600 and re-chmodded at every start, so a
 * copy or a restore that loosened it is tightened again.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDataDir } from "../data-dir.ts";

export function readOrCreateSecretFile<T>(
  dataDir: string,
  name: string,
  generate: () => T,
): { file: string; value: T } {
  const file = join(dataDir, name);
  if (!existsSync(file)) {
    makeDataDir(dataDir);
    writeFileSync(file, `${JSON.stringify(generate(), null, 2)}\n`, { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  return { file, value: JSON.parse(readFileSync(file, "utf8")) as T };
}
