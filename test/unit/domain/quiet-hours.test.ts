/** Quiet hours: a span of the local day in a time zone, over midnight or not; high breaks through. */
import { describe, expect, it } from "vitest";
import {
  clockOf,
  isQuiet,
  knownTimeZone,
  localMinutes,
  minutesOf,
  silenced,
} from "../../../src/domain/quiet-hours.ts";

const night = { timeZone: "Europe/Paris", start: minutesOf("22:00"), end: minutesOf("07:00") };
const lunch = { timeZone: "America/New_York", start: minutesOf("12:00"), end: minutesOf("13:30") };

describe("quiet hours", () => {
  it("reads the local time in the zone (Paris is UTC+1 in winter, New York UTC-5)", () => {
    expect(localMinutes("Europe/Paris", new Date("2026-11-25T21:30:00Z"))).toBe(22 * 60 + 30);
    expect(localMinutes("America/New_York", new Date("2026-11-25T17:00:00Z"))).toBe(12 * 60);
    expect(localMinutes("Europe/Paris", new Date("2026-07-01T21:30:00Z"))).toBe(23 * 60 + 30);
  });

  it.each([
    ["2026-11-25T20:59:00Z", false], // 21:59 in Paris
    ["2026-11-25T21:00:00Z", true], // 22:00: starts
    ["2026-11-26T02:00:00Z", true], // 03:00, over midnight
    ["2026-11-26T05:59:00Z", true], // 06:59
    ["2026-11-26T06:00:00Z", false], // 07:00: ends
  ])("22:00–07:00 in Paris at %s: %s", (at, quiet) => {
    expect(isQuiet(night, new Date(at))).toBe(quiet);
  });

  it("a span within one day", () => {
    expect(isQuiet(lunch, new Date("2026-11-25T17:15:00Z"))).toBe(true);
    expect(isQuiet(lunch, new Date("2026-11-25T18:30:00Z"))).toBe(false);
  });

  it("silences low and normal during them, never high, and nothing without them", () => {
    const at = new Date("2026-11-26T02:00:00Z");
    expect(silenced("low", night, at)).toBe(true);
    expect(silenced("normal", night, at)).toBe(true);
    expect(silenced("high", night, at)).toBe(false);
    expect(silenced("normal", null, at)).toBe(false);
  });

  it("knows IANA zones and the clock both ways", () => {
    expect(knownTimeZone("Europe/Paris")).toBe(true);
    expect(knownTimeZone("Mars/Olympus")).toBe(false);
    expect(clockOf(minutesOf("07:05"))).toBe("07:05");
  });
});
