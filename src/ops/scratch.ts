/**
 * An operator command's scratch directory in TMPDIR (a backup's copy of every table: hashed keys,
 * sealed tokens, webhook secrets). It goes however the command ends: the command removes it when
 * done or failed, an ending signal removes it (interrupt.ts), and SIGKILL, which runs nothing,
 * leaves it stamped with its command's process (process-stamp.ts) for the next command of the
 * kind to remove once that process has ended.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readStamp, stampedGone, stampThisProcess } from "../process-stamp.ts";
import { onInterrupt } from "./interrupt.ts";

const stampName = "owner";

export interface Scratch {
  path: string;
  /** Removes the directory and all in it (again: a no-op). */
  remove(): void;
}

/**
 * The command's scratch directory, or the command ends (exit code 1) saying why: a full TMPDIR
 * ended it with Node's stack, and left an empty directory behind.
 */
export function scratchOrExit(prefix: string, command: string): Scratch {
  try {
    return scratchDirectory(prefix);
  } catch (err) {
    process.stderr.write(`${command} failed: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

/** A new scratch directory named `prefix…`, after removing the ones killed commands left. */
export function scratchDirectory(prefix: string): Scratch {
  for (const name of readdirSync(tmpdir())) {
    const dir = join(tmpdir(), name);
    if (name.startsWith(prefix) && stampedGone(readStamp(join(dir, stampName)))) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const path = mkdtempSync(join(tmpdir(), prefix));
  const drop = () => rmSync(path, { recursive: true, force: true });
  try {
    stampThisProcess(join(path, stampName));
  } catch (err) {
    drop();
    throw new Error(`cannot write in ${tmpdir()} (TMPDIR): ${(err as Error).message}`);
  }
  const forget = onInterrupt(drop);
  return {
    path,
    remove: () => {
      forget();
      drop();
    },
  };
}
