/**
 * A serving process's heap limit (HERALD_PROCESS_HEAP_MB) by default fits the memory there is:
 * 2048 MB on a large machine, 40 % of a small one's (a container's limit) shared by the serving
 * processes, never under 128 MB; the setting wins. A fixed 2048 let a 512 MB container's heap
 * grow past its limit before V8 collected, and the kernel killed the process.
 */
import { totalmem } from "node:os";
import { describe, expect, it } from "vitest";
import { machineMemoryBytes, processHeapMb } from "../../src/config-parse.ts";

const mb = 2 ** 20;

describe("the serving processes' heap limit", () => {
  it("is 2048 MB where memory is plenty, and a share of it where it is short", () => {
    expect(processHeapMb({}, 1, 24 * 1024 * mb)).toBe(2048);
    expect(processHeapMb({}, 1, 512 * mb)).toBe(204);
    expect(processHeapMb({}, 3, 2048 * mb)).toBe(273);
    expect(processHeapMb({}, 4, 256 * mb)).toBe(128);
  });

  it("is what HERALD_PROCESS_HEAP_MB says when set (0: V8's own)", () => {
    expect(processHeapMb({ HERALD_PROCESS_HEAP_MB: "768" }, 1, 512 * mb)).toBe(768);
    expect(processHeapMb({ HERALD_PROCESS_HEAP_MB: "0" }, 1, 512 * mb)).toBe(0);
  });

  it("reads the memory there is: a control group's limit when under the machine's", () => {
    const memory = machineMemoryBytes();
    expect(memory).toBeGreaterThan(0);
    expect(memory).toBeLessThanOrEqual(totalmem());
  });
});
