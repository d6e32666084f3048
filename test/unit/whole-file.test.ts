/**
 * A created key file is on disk before it takes its name, and its name after: traced with
 * strace (the system calls a real process makes), since a power cut cannot be staged here.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const module = join(import.meta.dirname, "../../src/whole-file.ts");

/** The process's system calls on `file`'s copy, `file` and its folder, in the order made. */
function callsOf(trace: string, dir: string, file: string): string[] {
  const names = new Map<string, string>(); // fd -> what it is
  const calls: string[] = [];
  for (const line of trace.split("\n")) {
    const open = /openat\([^"]*"([^"]+)"[^)]*\) = (\d+)/.exec(line);
    if (open) {
      const what = open[1] === dir ? "dir" : open[1]?.startsWith(`${file}.`) ? "copy" : undefined;
      if (what) names.set(open[2] as string, what);
      else names.delete(open[2] as string);
      if (what) calls.push(`open ${what}`);
    }
    const sync = /fsync\((\d+)\)/.exec(line);
    if (sync && names.has(sync[1] as string)) calls.push(`fsync ${names.get(sync[1] as string)}`);
    if (/link(at)?\(/.test(line) && line.includes(`"${file}"`)) calls.push("link");
  }
  return calls;
}

describe("createWhole", () => {
  it("syncs the new file before it takes its name, and the folder after", () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-whole-"));
    const file = join(dir, "keys.json");
    const script = `import { createWhole } from ${JSON.stringify(module)};
      createWhole(${JSON.stringify(file)}, "{}\\n", 0o600);`;
    const out = join(dir, "trace");
    const args = ["-f", "-o", out, "-e", "trace=openat,fsync,link,linkat", process.execPath];
    execFileSync("strace", [...args, "--input-type=module", "-e", script], { stdio: "ignore" });
    const trace = readFileSync(out, "utf8");
    expect(readFileSync(file, "utf8")).toBe("{}\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(callsOf(trace, dir, file)).toEqual([
      "open copy",
      "open copy",
      "fsync copy",
      "link",
      "open dir",
      "fsync dir",
    ]);
  });
});
