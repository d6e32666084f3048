import { describe, expect, it } from "vitest";
import { uuidv7, uuidv7At } from "../../../src/domain/ids.ts";

describe("uuidv7", () => {
  it("is a version-7, variant-1 UUID whose first 48 bits are the time", () => {
    const id = uuidv7At(0x0123456789ab);
    expect(id).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
  it("sorts by time and does not repeat across many ids (pool refills included)", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
  it("made in one millisecond, sorts in the order made", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7(1_800_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => id.startsWith("01a3185c-5000-7"))).toBe(true);
  });
  it("made after a clock stepped back, sorts after those made before the step", () => {
    const before = uuidv7(1_900_000_000_000);
    const after = Array.from({ length: 100 }, (_, i) => uuidv7(1_900_000_000_000 - 3_600_000 + i));
    expect([before, ...after].sort()).toEqual([before, ...after]);
    // The clock back at where it was: time moves on again.
    const later = uuidv7(1_900_000_000_005);
    expect(later.slice(0, 13)).toBe(uuidv7(1_900_000_000_005).slice(0, 13));
    expect([...after, later].sort().at(-1)).toBe(later);
  });
});
