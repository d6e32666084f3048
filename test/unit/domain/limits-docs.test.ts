import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.ts";
import { defaultLimits, limitTable } from "../../../src/domain/limits.ts";

describe("the limits", () => {
  const doc = readFileSync(join(import.meta.dirname, "../../../docs/auth.md"), "utf8");
  const table = doc.slice(doc.indexOf("## Limits"), doc.indexOf("### With several processes"));

  it("are each listed in docs/auth.md, with its variable and default", () => {
    for (const [name, l] of Object.entries(limitTable)) {
      const row = table.split("\n").find((line) => line.includes(`\`${l.env}\``));
      expect(row, `${name} (${l.env})`).toBeDefined();
      expect(row?.replace(/,/g, ""), name).toContain(String(l.value));
    }
  });

  it("are read from their variables, and refused by name when unusable", () => {
    const config = loadConfig({ HERALD_MAX_WEBHOOKS: "3", HERALD_ACCOUNT_RATE_BURST: "500" });
    expect(config.limits).toEqual({
      ...defaultLimits,
      webhooksPerProject: 3,
      accountRequestBurst: 500,
    });
    expect(() => loadConfig({ HERALD_MAX_DEVICES: "lots" })).toThrow(/HERALD_MAX_DEVICES/);
    expect(() => loadConfig({ HERALD_MAX_DEVICES: "0" })).toThrow(/HERALD_MAX_DEVICES/);
  });
});
