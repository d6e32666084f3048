import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../../src/domain/ids.ts";

describe("uuidv7", () => {
  it("is a version-7, variant-1 UUID whose first 48 bits are the time", () => {
    const id = uuidv7(0x0123456789ab);
    expect(id).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
  it("sorts by time and does not repeat across many ids (pool refills included)", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
