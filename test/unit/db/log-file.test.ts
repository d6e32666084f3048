/**
 * The embedded PostgreSQL's log file (src/db/embedded/log-file.ts): a line that cannot be
 * written is dropped and said once, never an error that ends the process; the file is opened
 * again later, and that is said too. Past its size it begins a new file, keeping one old one.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendingLog } from "../../../src/db/embedded/log-file.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("the embedded PostgreSQL's log file", () => {
  it("drops lines a full disk refuses (/dev/full), says so once, and throws nothing", async () => {
    const said: (string | undefined)[] = [];
    const write = appendingLog("/dev/full", (reason) => said.push(reason), 20);
    for (let i = 0; i < 5; i++) {
      write(`line ${i}\n`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor(() => said.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    write("one more\n");
    await new Promise((r) => setTimeout(r, 50));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/ENOSPC/);
  });

  it("writes again once it can, and says so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-log-"));
    try {
      const file = join(dir, "gone", "postgres.log");
      const said: (string | undefined)[] = [];
      const write = appendingLog(file, (reason) => said.push(reason), 20);
      write("lost\n");
      await waitFor(() => said.length === 1);
      expect(said[0]).toMatch(/ENOENT/);
      mkdirSync(join(dir, "gone"));
      // Lines within 20 ms of the failure are dropped; then the file is opened again.
      await waitFor(() => {
        write("kept\n");
        return said.length === 2;
      });
      expect(said[1]).toBeUndefined();
      write("and this\n");
      await waitFor(() => readFileSync(file, "utf8").includes("and this"));
      expect(readFileSync(file, "utf8")).toMatch(/^(kept\n)+and this\n$/);
      expect(said).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("past its size, is renamed .1 (replacing the one before) and begins again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-log-"));
    try {
      const file = join(dir, "postgres.log");
      writeFileSync(file, "from the last start\n");
      const write = appendingLog(file, () => {}, 20, 30);
      write("first line\n"); // 20 + 11 bytes: past 30 with it
      write("second line\n"); // in a new file
      write("third line\n");
      write("fourth line\n"); // 35 bytes with it
      const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : "");
      await waitFor(() => read(file) === "second line\nthird line\nfourth line\n");
      // The old file's last write may land after the new file's (the thread pool).
      await waitFor(() => read(`${file}.1`) === "from the last start\nfirst line\n");
      expect(read(`${file}.1`)).toBe("from the last start\nfirst line\n");
      write("fifth line\n");
      await waitFor(() => read(file) === "fifth line\n");
      await waitFor(() => read(`${file}.1`) === "second line\nthird line\nfourth line\n");
      expect(read(`${file}.1`)).toBe("second line\nthird line\nfourth line\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
