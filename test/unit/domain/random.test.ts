import { describe, expect, it } from "vitest";
import { pooledRandom } from "../../../src/domain/random.ts";

describe("pooledRandom", () => {
  it("hands out each byte once: values do not repeat across pool refills", () => {
    // 2,000 × 16 bytes is eight 4 KiB pools.
    const values = Array.from({ length: 2000 }, () => pooledRandom(16).toString("hex"));
    expect(new Set(values).size).toBe(values.length);
    expect(values.every((v) => v.length === 32)).toBe(true);
  });

  it("leaves a view as it was after the pool is refilled", () => {
    const kept = pooledRandom(16);
    const copy = Buffer.from(kept);
    for (let i = 0; i < 600; i++) pooledRandom(9);
    expect(kept.equals(copy)).toBe(true);
  });

  it("takes a whole pool at once, and refuses more", () => {
    expect(pooledRandom(4096)).toHaveLength(4096);
    expect(() => pooledRandom(4097)).toThrow(RangeError);
  });

  it("is not all zeros (the pool is filled, not merely allocated)", () => {
    const bytes = Buffer.concat(Array.from({ length: 64 }, () => pooledRandom(16)));
    expect(bytes.some((b) => b !== 0)).toBe(true);
  });
});
