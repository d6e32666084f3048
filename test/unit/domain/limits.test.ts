import { describe, expect, it } from "vitest";
import { FailedAuthThrottle } from "../../../src/domain/failed-auth.ts";
import { LoginLimiter } from "../../../src/domain/login-limiter.ts";
import { rollupStatus } from "../../../src/domain/notification-status.ts";
import { TokenBucketLimiter } from "../../../src/domain/token-bucket.ts";

describe("TokenBucketLimiter", () => {
  it("allows the burst, refuses with the wait, and refills with time", () => {
    let now = 0;
    const b = new TokenBucketLimiter(3, 1, () => now);
    expect([1, 2, 3].map(() => b.take("k").allowed)).toEqual([true, true, true]);
    const refused = b.take("k");
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(b.take("other").allowed).toBe(true);
    now = 1000;
    expect(b.take("k").allowed).toBe(true);
    expect(b.peek("k").allowed).toBe(false);
  });
});

describe("LoginLimiter", () => {
  it("blocks an account after its failures, whatever the address, and not before", async () => {
    let now = 0;
    const clock = () => now;
    const l = new LoginLimiter(2, new FailedAuthThrottle(100, undefined, clock), clock);
    expect(await l.blocked("a@example.com", "1.1.1.1")).toBeUndefined();
    await l.failed("A@example.com", "1.1.1.1");
    await l.failed("a@example.com", "2.2.2.2");
    expect(await l.blocked("a@example.com", "3.3.3.3")).toBe(60);
    expect(await l.blocked("b@example.com", "3.3.3.3")).toBeUndefined();
    now = 60_000;
    expect(await l.blocked("a@example.com", "3.3.3.3")).toBeUndefined();
  });
});

describe("FailedAuthThrottle", () => {
  it("blocks an address from its limit's failure until a minute after its first", async () => {
    let now = 0;
    const t = new FailedAuthThrottle(3, undefined, () => now);
    await t.failed("1.1.1.1");
    now = 10_000;
    await t.failed("1.1.1.1");
    expect(t.blockedFor("1.1.1.1")).toBeUndefined();
    await t.failed("1.1.1.1");
    expect(t.blockedFor("1.1.1.1")).toBe(50);
    expect(t.blockedFor("2.2.2.2")).toBeUndefined();
    now = 59_999;
    expect(t.blockedFor("1.1.1.1")).toBe(1);
    now = 60_000;
    expect(t.blockedFor("1.1.1.1")).toBeUndefined();
    // A new window: one failure is not a block.
    await t.failed("1.1.1.1");
    expect(t.blockedFor("1.1.1.1")).toBeUndefined();
  });
});

describe("rollupStatus", () => {
  it("reports the notification's state from its deliveries", async () => {
    expect(rollupStatus("queued", {})).toBe("queued");
    expect(rollupStatus("no_devices", {})).toBe("no_devices");
    expect(rollupStatus("delivering", { pending: 1, sent: 1 })).toBe("delivering");
    // `delivered` only once every device confirmed it; a provider's acceptance is `sent`.
    expect(rollupStatus("delivering", { delivered: 1, opened: 1 })).toBe("delivered");
    expect(rollupStatus("delivering", { sent: 1, opened: 1 })).toBe("sent");
    expect(rollupStatus("delivering", { sent: 2 })).toBe("sent");
    expect(rollupStatus("delivering", { sent: 1, failed: 1 })).toBe("partially_sent");
    expect(rollupStatus("delivering", { failed: 1, expired: 1 })).toBe("failed");
    expect(rollupStatus("delivering", { expired: 2 })).toBe("expired");
    expect(rollupStatus("delivering", { delivered: 1, failed: 1 })).toBe("partially_delivered");
  });
});
