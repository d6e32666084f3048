/**
 * Small files written whole or not at all (the CLI's config, the generated key files, process
 * stamps): the text goes into a new file beside the target, which then takes the target's name.
 * A write that fails half way (a full disk) or a process killed at any point leaves the target
 * as it was, or absent, never cut short. Written in place, a key file cut short by a full disk
 * at the first start stopped every later start at its JSON; a config file cut short lost the
 * CLI's login; a stamp cut short named another process's id.
 *
 * A file created once (a generated key) is also made durable before it takes its name, and its
 * folder after: without it, a power cut after the first start could leave the key file empty
 * on disk while PostgreSQL already held device tokens sealed with it. A replaced file (the
 * CLI's config, rewritten with each notification `listen` takes) is not synced each time: the
 * filesystem keeps a rename over an existing file in order (ext4's auto_da_alloc), and the
 * worst a lost write costs is a place in the stream shown again.
 */
import {
  chmodSync,
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";

/** Writes `text` into a new file beside `file` with `mode`, then hands it to `take`. */
function viaCopy(file: string, text: string, mode: number, take: (copy: string) => void): void {
  const copy = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(copy, text, { mode });
    chmodSync(copy, mode); // as asked, whatever the umask
    take(copy);
  } catch (err) {
    rmSync(copy, { force: true });
    throw err;
  }
}

/** Replaces `file` (or creates it) with `text`; throws, `file` as it was, when it cannot. */
export function replaceWhole(file: string, text: string, mode: number): void {
  viaCopy(file, text, mode, (copy) => renameSync(copy, file));
}

/**
 * Creates `file` with `text` unless it exists: of two processes creating it at once, one wins,
 * and the other's copy is dropped (it reads the winner's).
 */
export function createWhole(file: string, text: string, mode: number): void {
  viaCopy(file, text, mode, (copy) => {
    try {
      synced(copy);
      linkSync(copy, file);
      synced(dirname(file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      rmSync(copy);
    }
  });
}

/** Flushes `path` (a file, or a folder's entries) to disk. */
function synced(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
