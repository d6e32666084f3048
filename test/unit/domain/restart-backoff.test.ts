import { describe, expect, it } from "vitest";
import { restartDelayMs } from "../../../src/domain/restart-backoff.ts";

const crash = { othersServing: true, bySignal: false };

describe("restartDelayMs", () => {
  it("replaces a crashing process at once, then backs off from 0.5 s, doubling, to 30 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => restartDelayMs(n, crash))).toEqual([
      0, 0, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    expect(restartDelayMs(1000, crash)).toBe(30_000);
  });

  it("waits at most 1 s while no other process serves, or after a death by a signal", () => {
    const alone = { othersServing: false, bySignal: false };
    const killed = { othersServing: true, bySignal: true };
    expect([1, 2, 3, 4, 9].map((n) => restartDelayMs(n, alone))).toEqual([
      0, 500, 1000, 1000, 1000,
    ]);
    expect([1, 2, 3, 4, 9].map((n) => restartDelayMs(n, killed))).toEqual([
      0, 500, 1000, 1000, 1000,
    ]);
  });
});
