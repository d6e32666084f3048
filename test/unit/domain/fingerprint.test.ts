import { describe, expect, it } from "vitest";
import { canonicalJson, requestFingerprint } from "../../../src/domain/fingerprint.ts";

describe("requestFingerprint", () => {
  it("ignores key order at every depth and undefined members", () => {
    const a = requestFingerprint({ title: "t", metadata: { b: 1, a: [1, { y: 2, x: 1 }] } });
    const b = requestFingerprint({
      metadata: { a: [1, { x: 1, y: 2 }], b: 1 },
      title: "t",
      z: undefined,
    });
    expect(a.equals(b)).toBe(true);
  });
  it("changes with any value, with array order, and with null versus absent", () => {
    const base = requestFingerprint({ title: "t", tags: [1, 2] });
    expect(base.equals(requestFingerprint({ title: "T", tags: [1, 2] }))).toBe(false);
    expect(base.equals(requestFingerprint({ title: "t", tags: [2, 1] }))).toBe(false);
    expect(
      requestFingerprint({ title: "t", x: null }).equals(requestFingerprint({ title: "t" })),
    ).toBe(false);
  });
  it("is a SHA-256 over canonical JSON", () => {
    expect(canonicalJson({ b: "2", a: [true, null] })).toBe('{"a":[true,null],"b":"2"}');
    expect(requestFingerprint({}).length).toBe(32);
  });
});
