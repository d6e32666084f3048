/**
 * An append-only log file that never ends its process. A line that cannot be written (a full
 * disk, a removed directory) is dropped, and said once through `trouble`; the file is opened
 * again for a line `retryMs` later, and the first line written after says so (`trouble` with
 * no reason). Before, the embedded PostgreSQL's log was a plain write stream: its first ENOSPC
 * was an `error` event nobody listened for, which ended Herald within a second of a full disk
 * (by hand, a data directory on a full tmpfs), where the database only refused writes.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { monotonicMs } from "../../domain/clock.ts";

export function appendingLog(
  path: string,
  trouble: (reason: string | undefined) => void,
  retryMs = 5_000,
): (line: string) => void {
  let stream: WriteStream | undefined;
  /** When the last line was lost (while lines are being dropped). */
  let failedAt: number | undefined;
  const failed = (s: WriteStream, err: Error) => {
    s.destroy();
    if (stream === s) stream = undefined;
    if (failedAt === undefined) trouble(err.message);
    failedAt = monotonicMs();
  };
  return (line) => {
    if (!stream) {
      if (failedAt !== undefined && monotonicMs() - failedAt < retryMs) return;
      const s = createWriteStream(path, { flags: "a" });
      s.on("error", (err) => failed(s, err));
      stream = s;
    }
    stream.write(line, (err) => {
      if (err || failedAt === undefined) return;
      failedAt = undefined;
      trouble(undefined);
    });
  };
}
