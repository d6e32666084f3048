import { describe, expect, it } from "vitest";
import { backoffMs, deadline, noTtlDeadlineMs, retryCapMs } from "../../../src/domain/retry.ts";

describe("backoffMs", () => {
  it("draws from a window that doubles per attempt (full jitter)", () => {
    const top = () => 0.999999;
    expect(backoffMs(1, 0, top)).toBe(999);
    expect(backoffMs(2, 0, top)).toBe(1999);
    expect(backoffMs(4, 0, top)).toBe(7999);
    expect(backoffMs(3, 0, () => 0)).toBe(0);
  });
  it("is capped at five minutes however many attempts", () => {
    expect(backoffMs(40, 0, () => 0.999999)).toBe(retryCapMs - 1);
  });
  it("never comes sooner than the provider's Retry-After", () => {
    expect(backoffMs(1, 30_000, () => 0.5)).toBe(30_000);
    expect(backoffMs(12, 1_000, () => 0.5)).toBe(retryCapMs / 2);
  });
});

describe("deadline", () => {
  it("is the expiry when there is a ttl, else 24 hours after creation", () => {
    const created = new Date("2026-01-01T00:00:00Z");
    const expires = new Date("2026-01-01T00:05:00Z");
    expect(deadline(created, expires)).toBe(expires);
    expect(deadline(created, null).getTime()).toBe(created.getTime() + noTtlDeadlineMs);
  });
});
