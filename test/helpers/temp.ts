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
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}
