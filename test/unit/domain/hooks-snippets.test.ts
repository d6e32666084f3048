/** docs/integrations.md shows each sender's snippet exactly as the CLI and the console print it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hookKinds, senderSnippet } from "../../../src/domain/hooks/index.ts";

const doc = readFileSync(join(import.meta.dirname, "../../../docs/integrations.md"), "utf8");

describe("sender snippets", () => {
  it.each(hookKinds)("docs/integrations.md holds the %s snippet", (kind) => {
    expect(doc).toContain(senderSnippet(kind, "<url>"));
  });
});
