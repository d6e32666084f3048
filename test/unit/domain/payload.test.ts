import { describe, expect, it } from "vitest";
import { fitPreview } from "../../../src/domain/payload.ts";

const encode = JSON.stringify;
const base = { id: "n1", topic: "deploys", title: "Deploy finished" };
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

describe("fitPreview", () => {
  it("keeps a message that fits untouched", () => {
    const p = fitPreview({ ...base, message: "short" }, 4096, encode);
    expect(p).toEqual({ ...base, message: "short", truncated: false });
  });
  it("cuts the longest message that fits, marked with an ellipsis", () => {
    const p = fitPreview({ ...base, message: "x".repeat(5000) }, 200, encode);
    expect(p.truncated).toBe(true);
    expect(p.message.endsWith("…")).toBe(true);
    expect(bytes(encode(p))).toBeLessThanOrEqual(200);
    // One more character would not fit.
    const longer = { ...p, message: `${"x".repeat(Array.from(p.message).length)}…` };
    expect(bytes(encode(longer))).toBeGreaterThan(200);
  });
  it("never cuts inside a character (emoji are several UTF-16 units and UTF-8 bytes)", () => {
    const p = fitPreview({ ...base, message: "🚀".repeat(400) }, 150, encode);
    expect(Array.from(p.message.slice(0, -1)).every((c) => c === "🚀")).toBe(true);
    expect(bytes(encode(p))).toBeLessThanOrEqual(150);
  });
  it("refuses when even an empty message cannot fit", () => {
    expect(() => fitPreview({ ...base, message: "m" }, 10, encode)).toThrow(/does not fit/);
  });
});
