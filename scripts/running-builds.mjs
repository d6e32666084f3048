// Which of the server's builds (dist/server-<time>) a process runs. scripts/run.mjs marks the
// build it is about to run with its pid (`.running/<pid>` inside it), before it loads any of it,
// and removes the mark when it exits; scripts/build-server.ts removes an older build only when no
// live process marks it. Without this, a server that ran through two builds (an upgrade's
// `npm ci`, then `npm test` or a change to src/ in the same checkout) lost its files: every
// serving process it started after that died on start ("Cannot find module"), and it could no
// longer replace one that crashed. A mark whose process is gone (killed outright) counts for
// nothing. Plain JavaScript: run.mjs runs on any Node.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const marks = (build) => join(build, ".running");

/** Marks `build` as run by this process until it exits. Best effort: a read-only tree is fine. */
export function holdBuild(build) {
  const mark = join(marks(build), String(process.pid));
  try {
    mkdirSync(marks(build), { recursive: true });
    writeFileSync(mark, "");
  } catch {
    return;
  }
  process.once("exit", () => rmSync(mark, { force: true }));
}

/** Whether a live process marks `build` as the one it runs. */
export function buildInUse(build) {
  let pids;
  try {
    pids = readdirSync(marks(build));
  } catch {
    return false;
  }
  return pids.some((pid) => {
    try {
      process.kill(Number(pid), 0);
      return true;
    } catch (err) {
      return err.code === "EPERM"; // alive, another user's
    }
  });
}
