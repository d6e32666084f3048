/**
 * The data directory (HERALD_DATA_DIR), made when missing. Node's own error named neither the
 * setting nor the trouble in a person's words (`EEXIST: file already exists, mkdir '/srv/herald'`
 * for a file in its place); this one does.
 */
import { mkdirSync } from "node:fs";

export function makeDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === "EEXIST" || e.code === "ENOTDIR"
        ? "a file is in the way (it or a folder on its path is not a folder)"
        : e.code === "EACCES" || e.code === "EPERM"
          ? "permission denied (run Herald as a user that may write there, or choose another)"
          : e.code === "EROFS"
            ? "the file system is read-only"
            : e.message;
    throw new Error(`the data directory ${dir} (HERALD_DATA_DIR) cannot be made: ${why}`);
  }
}
