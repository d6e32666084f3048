/**
 * An operator command's scratch directory in TMPDIR (a backup's copy of every table: hashed keys,
 * sealed tokens, webhook secrets). The command removes it however it ends, save SIGKILL, which
 * runs nothing; so each directory is stamped with its command's process (process-stamp.ts), and
 * the next command of the kind removes those whose command has ended.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readStamp, stampedGone, stampThisProcess } from "../process-stamp.ts";

const stampName = "owner";

/** A new scratch directory named `prefix…`, after removing the ones killed commands left. */
export function scratchDirectory(prefix: string): string {
  for (const name of readdirSync(tmpdir())) {
    const dir = join(tmpdir(), name);
    if (name.startsWith(prefix) && stampedGone(readStamp(join(dir, stampName)))) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  stampThisProcess(join(dir, stampName));
  return dir;
}
