/** Settings read from the environment: the fan-out's chunk (HERALD_FAN_OUT_CHUNK). */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";

describe("HERALD_FAN_OUT_CHUNK", () => {
  it("is 1,000 deliveries a statement unless set", () => {
    expect(loadConfig({}).fanOutChunk).toBe(1000);
    expect(loadConfig({ HERALD_FAN_OUT_CHUNK: "2500" }).fanOutChunk).toBe(2500);
  });

  it("refuses a chunk under 100 deliveries, naming the setting (a fan-out of one per statement starves every other)", () => {
    expect(() => loadConfig({ HERALD_FAN_OUT_CHUNK: "1" })).toThrow(/HERALD_FAN_OUT_CHUNK/);
    expect(() => loadConfig({ HERALD_FAN_OUT_CHUNK: "lots" })).toThrow(/HERALD_FAN_OUT_CHUNK/);
  });
});
