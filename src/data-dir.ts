/**
 * The data directory (HERALD_DATA_DIR), made when missing. Node's own error named neither the
 * setting nor the trouble in a person's words (`EEXIST: file already exists, mkdir '/srv/herald'`
 * for a file in its place); this one does. Each missing folder is made in turn, from the nearest
 * one that exists: Node's `recursive` mkdir loops for ever, deaf to signals, where a folder
 * exists but cannot hold another (under /proc: `npm start` spun a core until SIGKILL).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** Makes `dir` and its missing parents one at a time (with `mode`), raising fs's own errors. */
export function makeFolders(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d, mode);
    } catch (err) {
      // Made meanwhile by another process: as good.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(d).isDirectory()) throw err;
    }
  }
}

export function makeDataDir(dir: string): void {
  try {
    makeFolders(dir);
    if (!statSync(dir).isDirectory())
      throw Object.assign(new Error("not a folder"), { code: "ENOTDIR" });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === "EEXIST" || e.code === "ENOTDIR"
        ? "a file is in the way (it or a folder on its path is not a folder)"
        : e.code === "EACCES" || e.code === "EPERM"
          ? "permission denied (run Herald as a user that may write there, or choose another)"
          : e.code === "EROFS"
            ? "the file system is read-only"
            : e.code === "ENOENT"
              ? "its file system makes no folders there (such as /proc or /sys)"
              : e.message;
    throw new Error(`the data directory ${dir} (HERALD_DATA_DIR) cannot be made: ${why}`);
  }
}
