/**
 * Log lines for a stdout nobody reads (a log collector that stalled, `npm start | less` left
 * paused): a process holds a few MiB of them, drops the rest, and says how many it dropped once
 * stdout is read again. Before, every line was held in memory for as long as the reader stalled
 * (22 MiB here; a busy server's log, a gigabyte an hour), until the process ran out of memory.
 * The logger runs in a child process whose stdout is a pipe this test leaves unread.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../helpers/temp.ts";

const logger = join(import.meta.dirname, "../../../src/observability/logger.ts");

const child = `
import { createLogger } from ${JSON.stringify(logger)};
const log = createLogger({ level: "info", format: "json", role: "server" });
const filler = "x".repeat(1000);
let peak = 0;
for (let batch = 0; batch < 200; batch++) {
  for (let i = 0; i < 100; i++) log.info({ batch, i, filler }, "filler");
  await new Promise((r) => setImmediate(r));
  peak = Math.max(peak, process.stdout.writableLength);
}
process.stderr.write("peak " + peak + "\\n");
process.stdin.once("data", () => {
  process.stdin.destroy();
  // Once what stdout held is read (the notice goes then), a line logged goes out.
  const wait = () =>
    process.stdout.writableLength > 0 ? setTimeout(wait, 20) : log.info("the last line");
  wait();
});
`;

describe("the log, when nothing reads stdout", () => {
  it("holds a few MiB of lines, drops the rest, and says how many once read again", async () => {
    const script = join(tempDir("herald-log-unread-"), "child.mjs");
    writeFileSync(script, child);
    const proc = spawn(process.execPath, [script], { stdio: ["pipe", "pipe", "pipe"] });
    const peak = await new Promise<number>((resolve, reject) => {
      let err = "";
      proc.stderr.on("data", (c: Buffer) => {
        err += c.toString();
        const m = /peak (\d+)/.exec(err);
        if (m) resolve(Number(m[1]));
      });
      proc.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    // 200 turns of 100 lines of about 1.1 KB: 22 MiB, had every line been held.
    expect(peak).toBeLessThan(6 * 1024 * 1024);
    let out = "";
    proc.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const exited = new Promise<number | null>((r) => proc.once("close", (code) => r(code)));
    proc.stdin.write("go\n");
    expect(await exited).toBe(0);
    const lines = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; dropped_lines?: number });
    const fillers = lines.filter((l) => l.msg === "filler").length;
    const notice = lines.find((l) => l.msg.startsWith("log lines dropped"));
    expect(fillers).toBeGreaterThan(0);
    expect(notice?.dropped_lines).toBe(20_000 - fillers);
    expect(lines.at(-1)?.msg).toBe("the last line");
  });
});
