/**
 * The server's build (scripts/build-server.ts, made by the test setup): an entry for `npm start`
 * and for each operator command, source maps beside, and ASCII (Latin-1 at most), so that V8
 * keeps each loaded source as one byte per character (BENCHMARKS.md, issue 20).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serverDist } from "../../../scripts/build-server.ts";

const files = readdirSync(serverDist, { recursive: true, encoding: "utf8" });

describe("the server's build", () => {
  it("has npm start's entry and every operator command's, each with its source map", () => {
    const pkg = JSON.parse(readFileSync(join(serverDist, "../../package.json"), "utf8"));
    const commands = Object.values(pkg.scripts as Record<string, string>).flatMap((s) => {
      const m = /scripts\/run\.mjs (\S+)/.exec(s);
      return m ? [m[1] as string] : [];
    });
    expect(commands).toContain("main");
    expect(commands).toContain("ops/backup");
    for (const entry of commands) {
      expect(files).toContain(`src/${entry}.js`);
      expect(files).toContain(`src/${entry}.js.map`);
    }
  });

  it("holds no character beyond Latin-1 (ASCII, but for an accented name in a licence)", () => {
    const js = files.filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThan(10);
    for (const f of js) {
      const text = readFileSync(join(serverDist, f), "utf8");
      let widest = 0;
      for (let i = 0; i < text.length; i++) widest = Math.max(widest, text.charCodeAt(i));
      expect(widest, f).toBeLessThanOrEqual(0xff);
    }
  });
});
