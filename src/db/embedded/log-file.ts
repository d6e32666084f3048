/**
 * An append-only log file that never ends its process. A line that cannot be written (a full
 * disk, a removed directory) is dropped, and said once through `trouble`; the file is opened
 * again for a line `retryMs` later, and the first line written after says so (`trouble` with
 * no reason). Before, the embedded PostgreSQL's log was a plain write stream: its first ENOSPC
 * was an `error` event nobody listened for, which ended Herald within a second of a full disk
 * (by hand, a data directory on a full tmpfs), where the database only refused writes.
 */
import { createWriteStream, fstatSync, openSync, renameSync, type WriteStream } from "node:fs";
import { monotonicMs } from "../../domain/clock.ts";

/**
 * Past `maxBytes` (10 MiB) the file is renamed `path.1`, replacing the one before, and a new one
 * begins: left running for years, the log takes at most twice that. Before, it grew for ever.
 */
export function appendingLog(
  path: string,
  trouble: (reason: string | undefined) => void,
  retryMs = 5_000,
  maxBytes = 10 * 1024 * 1024,
): (line: string) => void {
  let stream: WriteStream | undefined;
  let size = 0;
  /** When the last line was lost (while lines are being dropped). */
  let failedAt: number | undefined;
  const lost = (err: Error) => {
    if (failedAt === undefined) trouble(err.message);
    failedAt = monotonicMs();
  };
  /** The file, opened now (so that a rename moves what this stream writes with it). */
  const open = (): WriteStream | undefined => {
    let fd: number;
    try {
      fd = openSync(path, "a");
    } catch (err) {
      lost(err as Error);
      return undefined;
    }
    const s = createWriteStream(path, { fd });
    s.on("error", (err) => {
      s.destroy();
      if (stream === s) stream = undefined;
      lost(err);
    });
    size = fstatSync(fd).size;
    return s;
  };
  return (line) => {
    if (stream && size >= maxBytes) {
      stream.end();
      stream = undefined;
      try {
        renameSync(path, `${path}.1`);
      } catch {} // gone or not renamable: the lines go on in a new file, or the same one
    }
    if (!stream) {
      if (failedAt !== undefined && monotonicMs() - failedAt < retryMs) return;
      stream = open();
      if (!stream) return;
    }
    size += Buffer.byteLength(line);
    stream.write(line, (err) => {
      if (err || failedAt === undefined) return;
      failedAt = undefined;
      trouble(undefined);
    });
  };
}
