import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const script = resolve(import.meta.dirname, "../../../scripts/check-node.cjs");

/** Runs npm install's first step as if on Node `version`. */
function checkAs(version: string) {
  const pretend = `Object.defineProperty(process.versions, "node", { value: "${version}" }); Object.defineProperty(process, "version", { value: "v${version}" }); require(${JSON.stringify(script)});`;
  return spawnSync(process.execPath, ["-e", pretend], { encoding: "utf8" });
}

describe("npm install on an older Node", () => {
  it("stops at once with one line naming the version needed and how to get it", () => {
    const r = checkAs("20.20.2");
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      /needs Node\.js 22\.17 or newer \(this is v20\.20\.2\).*nvm install 24/,
    );
  });
  it("goes on quietly on 22.17 and newer", () => {
    for (const v of ["22.17.0", "24.0.0"]) {
      const r = checkAs(v);
      expect(r.status, v).toBe(0);
      expect(r.stderr, v).toBe("");
    }
    expect(checkAs("22.16.9").status).toBe(1);
  });
});

describe("npm itself on an older Node", () => {
  it("refuses to install before downloading anything: engine-strict, and the same minimum", () => {
    const root = resolve(import.meta.dirname, "../../..");
    expect(readFileSync(resolve(root, ".npmrc"), "utf8")).toMatch(/^engine-strict=true$/m);
    const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8"));
    expect(pkg.engines.node).toBe(">=22.17");
  });
});
