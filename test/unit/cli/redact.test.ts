import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../../src/cli/redact.ts";
import { secretCases } from "../../helpers/secrets.ts";

describe("redactSecrets", () => {
  for (const c of secretCases) {
    it(`removes ${c.name}`, () => {
      const out = redactSecrets(c.text);
      expect(out).not.toContain(c.secret);
      expect(out).toContain("[redacted]");
      if (c.kept) expect(out).toContain(c.kept);
    });
  }
  it("leaves ordinary text alone", () => {
    const text =
      "npm run build && make test; git log --author=Bob; ./rotate token now; echo done (exit 0) https://ci.example.com/run/42";
    expect(redactSecrets(text)).toBe(text);
  });
  it("is idempotent", () => {
    for (const c of secretCases) {
      const once = redactSecrets(c.text);
      expect(redactSecrets(once)).toBe(once);
    }
  });
});
