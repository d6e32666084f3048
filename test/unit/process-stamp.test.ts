/**
 * A stamp file (which process owns the embedded PostgreSQL, or an operator's scratch folder) is
 * written whole or not at all: one cut short named another process's id (`12345 678` cut to
 * `12`), which a live process may hold, so a dead owner could be taken for a live one.
 */
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readStamp, stampThisProcess } from "../../src/process-stamp.ts";
import { tempDir } from "../helpers/temp.ts";

const stamps = join(import.meta.dirname, "../../src/process-stamp.ts");

/** Stamps `file` from a process whose writes fail past `bytes` (the file size limit). */
function stampCramped(file: string, bytes: number) {
  return spawnSync(
    "prlimit",
    [`--fsize=${bytes}`, process.execPath, "--input-type=module", "-e"].concat(
      `const { stampThisProcess } = await import(${JSON.stringify(stamps)});
       stampThisProcess(${JSON.stringify(file)});`,
    ),
    { encoding: "utf8" },
  );
}

describe("a stamp whose write fails half way", () => {
  it("is not left cut short: no stamp, or the one before", () => {
    const dir = tempDir("herald-stamp-");
    const fresh = join(dir, "fresh.owner");
    const failed = stampCramped(fresh, 2);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain("EFBIG");
    expect(existsSync(fresh)).toBe(false);

    const kept = join(dir, "kept.owner");
    writeFileSync(kept, "4242 99\n");
    expect(stampCramped(kept, 2).status).toBe(1);
    expect(readStamp(kept)).toEqual({ pid: 4242, start: "99" });

    stampThisProcess(kept);
    expect(readStamp(kept)?.pid).toBe(process.pid);
  });
});
