/**
 * A serving process near its open-files limit says so (src/observability/open-files.ts): at
 * the limit, libuv accepts each new connection and closes it at once, and clients see resets
 * that nothing else explains. The limit is lowered under the running process with util-linux's
 * `prlimit`, as a unit file's `LimitNOFILE` or a container's `ulimit` would set it.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { logLines as lines, spawnHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { servingProcesses } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

describe("a serving process near its open-files limit", () => {
  it("says so once, with the numbers, and once when it is back under", async () => {
    const proc = await spawnHerald({
      HERALD_DATA_DIR: tempDir("herald-open-files-"),
      HERALD_PROCESSES: "1",
    });
    const sockets: Socket[] = [];
    try {
      const [serving] = servingProcesses(proc.child.pid as number);
      expect(serving).toBeDefined();
      const open = readdirSync(`/proc/${serving}/fd`).length;
      const limit = open + 30;
      execFileSync("prlimit", [`--pid=${serving}`, `--nofile=${limit}:${limit}`]);
      // Idle connections, each a descriptor in the serving process, past 90 % of the limit.
      const port = Number(new URL(proc.url).port);
      for (let i = 0; i < 40; i++) {
        const s = connect(port, "127.0.0.1");
        s.on("error", () => {}); // past the limit, reset at once
        sockets.push(s);
      }
      const high = () => lines(proc.stdout(), "open files at");
      await waitFor(() => high().length > 0, 15_000);
      expect(high()).toHaveLength(1);
      expect(high()[0]).toMatchObject({ level: 40, limit });
      expect(Number(high()[0]?.open_files)).toBeGreaterThanOrEqual(limit * 0.9);
      expect(high()[0]?.msg).toMatch(
        /^open files at \d+ % of the limit \(\d+ of \d+\): at the limit new connections are reset; raise it \(LimitNOFILE, ulimit -n\) or look for a leak$/,
      );
      for (const s of sockets) s.destroy();
      const back = () => lines(proc.stdout(), "open files back under 80 % of the limit");
      await waitFor(() => back().length > 0, 15_000);
      expect(back()).toHaveLength(1);
      expect(high()).toHaveLength(1);
    } finally {
      for (const s of sockets) s.destroy();
      proc.child.kill("SIGTERM");
      await proc.exited;
    }
  }, 60_000);
});
