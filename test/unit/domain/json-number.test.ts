import { describe, expect, it } from "vitest";
import { keepsValue, mayLoseDigits } from "../../../src/domain/json-number.ts";

const check = (source: string) => keepsValue(source, JSON.parse(source));

describe("keepsValue", () => {
  it("accepts numbers a double holds at the same decimal value", () => {
    for (const s of [
      "0",
      "-0",
      "1",
      "1.0",
      "1e3",
      "0.1",
      "-2.5E-3",
      "9007199254740991",
      "1.5e300",
    ]) {
      expect(check(s), s).toBe(true);
    }
  });
  it("refuses numbers whose digits a double would lose", () => {
    for (const s of [
      "9007199254740993",
      "12345678901234567890",
      "3.14159265358979323846",
      "0.10000000000000000001",
      "1e400",
    ]) {
      expect(check(s), s).toBe(false);
    }
  });
});

describe("mayLoseDigits", () => {
  it("flags every text holding a number keepsValue refuses", () => {
    for (const s of [
      "9007199254740993",
      "12345678901234567890",
      "3.14159265358979323846",
      "0.10000000000000000001",
      "1e400",
      "1.234567e-320",
    ]) {
      expect(check(s), s).toBe(false);
      expect(mayLoseDigits(`{"metadata":{"n":${s}}}`), s).toBe(true);
    }
  });
  it("lets an ordinary publish body through without the check", () => {
    const body = '{"title":"Deploy finished","metadata":{"build":4211,"ms":192.5,"ok":true}}';
    expect(mayLoseDigits(body)).toBe(false);
  });
});
