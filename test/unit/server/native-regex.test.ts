/**
 * The platform RegExp for Herald's `string.pattern` rules (server/interceptors/validate.ts):
 * every pattern written in proto/ passes the check that keeps matching linear, and a pattern
 * that would not is refused rather than matched.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { explainPattern } from "../../../src/domain/notify-rules.ts";
import { nativeRegexMatch } from "../../../src/server/interceptors/validate.ts";

const protoDir = join(import.meta.dirname, "../../../proto/herald/v1");
const patterns = [
  ...new Set(
    readdirSync(protoDir)
      .filter((f) => f.endsWith(".proto"))
      .flatMap((f) =>
        [
          ...readFileSync(join(protoDir, f), "utf8").matchAll(
            /pattern(?: =|:) "((?:[^"\\]|\\.)*)"/g,
          ),
        ].map(
          // The proto string's escapes (\\* is a regex's \*).
          (m) => JSON.parse(`"${m[1]}"`) as string,
        ),
      ),
  ),
];

describe("nativeRegexMatch", () => {
  it("accepts every pattern in proto/", () => {
    expect(patterns.length).toBeGreaterThanOrEqual(5);
    for (const p of patterns) expect(() => nativeRegexMatch(p, "")).not.toThrow();
  });

  it("matches as RE2 does for the topic pattern: whole input, no trailing newline", () => {
    const topic = "^[a-z0-9_-]{0,64}$";
    expect(nativeRegexMatch(topic, "deploys")).toBe(true);
    expect(nativeRegexMatch(topic, "")).toBe(true);
    expect(nativeRegexMatch(topic, "Deploys")).toBe(false);
    expect(nativeRegexMatch(topic, "deploys\n")).toBe(false);
    expect(nativeRegexMatch(topic, "a".repeat(65))).toBe(false);
    expect(nativeRegexMatch("^([a-z0-9][a-z0-9_-]{0,62}/)?([a-z0-9_-]{1,64}|\\*)$", "*")).toBe(
      true,
    );
  });

  it("each has words for a person: a field out of its pattern is not told the regular expression", () => {
    for (const p of patterns) {
      const raw = `does not match regex pattern \`${p}\``;
      const said = explainPattern(raw, "?");
      expect(said, p).toMatch(/^must be /);
      expect(said, p).not.toContain(p);
    }
  });

  it("refuses patterns whose matching could backtrack", () => {
    for (const p of ["^(a+)+$", "^a*$", "^(ab){2,}$", "[a-z]{1,3}"]) {
      expect(() => nativeRegexMatch(p, "aaaa")).toThrow(/keep RE2 for it/);
    }
  });
});
