/**
 * Directories in TMPDIR for a test file, removed when its tests are done: data directories,
 * homes and key files hold secrets, and a run must not leave them behind.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const made: string[] = [];
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A new directory named `prefix…` in TMPDIR, removed after this file's tests. */
export function tempDir(prefix: string): string {
  return removedAfterTests(mkdtempSync(join(tmpdir(), prefix)));
}

/** `path` (a directory a test made elsewhere: a relocated cluster) removed after this file's tests. */
export function removedAfterTests(path: string): string {
  made.push(path);
  return path;
}
