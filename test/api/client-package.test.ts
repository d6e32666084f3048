/**
 * The published form of the SDK and CLI: built JavaScript with declarations, importing nothing
 * but its four declared dependencies (so the server's never reach a user's project), and working
 * against a real server.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server.ts";

const root = resolve(import.meta.dirname, "../..");
// Inside the repository, so that the built code resolves its dependencies from node_modules.
const out = join(root, "node_modules", ".cache", `herald-client-${process.pid}`);
let server: TestServer;

beforeAll(async () => {
  execFileSync(process.execPath, [
    "--experimental-strip-types",
    join(root, "scripts/build-clients.ts"),
    out,
  ]);
  server = await startServer();
}, 60_000);
afterAll(async () => {
  await server.close();
  rmSync(out, { recursive: true, force: true });
});

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe("@herald/client", () => {
  it("imports only its declared dependencies and Node built-ins, and stays inside itself", () => {
    const manifest = JSON.parse(readFileSync(join(out, "package.json"), "utf8"));
    const allowed = new Set(Object.keys(manifest.dependencies));
    expect([...allowed].sort()).toEqual([
      "@bufbuild/protobuf",
      "@bufbuild/protovalidate",
      "@connectrpc/connect",
      "@connectrpc/connect-node",
      "@modelcontextprotocol/sdk",
      "zod",
    ]);
    const js = files(out).filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThan(10);
    for (const file of js) {
      const source = readFileSync(file, "utf8");
      for (const [, spec] of source.matchAll(
        /^\s*(?:import|export)[^"'\n]*?from\s+["']([^"']+)["']/gm,
      )) {
        const s = spec as string;
        if (s.startsWith(".")) {
          const target = resolve(file, "..", s);
          expect(relative(out, target).startsWith(".."), `${file} imports ${s}`).toBe(false);
          expect(existsSync(target), `${file} imports missing ${s}`).toBe(true);
        } else if (s.startsWith("node:") || builtinModules.includes(s)) {
          // built-in
        } else {
          const pkg = s.startsWith("@")
            ? s.split("/").slice(0, 2).join("/")
            : (s.split("/")[0] as string);
          expect(allowed.has(pkg), `${relative(out, file)} imports ${s}`).toBe(true);
        }
      }
    }
    expect(existsSync(join(out, "src/sdk/index.d.ts"))).toBe(true);
    expect(
      readFileSync(join(out, "src/cli/entry.js"), "utf8").startsWith("#!/usr/bin/env node\n"),
    ).toBe(true);
  });

  it("works as built: the SDK publishes and the CLI answers", async () => {
    const sdk = (await import(
      join(out, "src/sdk/index.js")
    )) as typeof import("../../src/sdk/index.ts");
    const herald = new sdk.Herald({ apiKey: server.apiKey, baseUrl: server.url });
    const n = await herald.notify({ title: "from the built SDK" });
    expect(n.title).toBe("from the built SDK");
    // Asynchronously: the server under test lives in this very process.
    const child = spawn(
      process.execPath,
      [join(out, "src/cli/entry.js"), "notify", "from the built CLI", "--json"],
      {
        stdio: ["ignore", "pipe", "inherit"],
        env: {
          ...process.env,
          HERALD_URL: server.url,
          HERALD_API_KEY: server.apiKey,
          HOME: out,
          XDG_CONFIG_HOME: join(out, "cfg"),
        },
      },
    );
    let out2 = "";
    child.stdout.on("data", (c: Buffer) => {
      out2 += c.toString();
    });
    expect(await new Promise((r) => child.on("close", r))).toBe(0);
    expect(JSON.parse(out2).title).toBe("from the built CLI");
  });

  it("packs with a README, and the README's snippets run as written in a fresh npm init -y project", async () => {
    const work = mkdtempSync(join(tmpdir(), "herald-sdk-project-"));
    try {
      const packed = execFileSync("npm", ["pack", out, "--pack-destination", work, "--silent"], {
        encoding: "utf8",
      }).trim();
      const tgz = join(work, packed.split("\n").at(-1) as string);
      const listing = execFileSync("tar", ["-tzf", tgz], { encoding: "utf8" });
      expect(listing).toContain("package/README.md");
      const project = join(work, "project");
      mkdirSync(project);
      execFileSync("npm", ["init", "-y"], { cwd: project, stdio: "ignore" });
      execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tgz], {
        cwd: project,
        stdio: "ignore",
      });
      const readme = readFileSync(join(root, "README.md"), "utf8");
      for (const file of ["index.js", "index.mjs"]) {
        const block = new RegExp(
          `\`\`\`js\\n// ${file.replace(".", "\\.")}\\n([\\s\\S]*?)\`\`\``,
        ).exec(readme)?.[1];
        expect(block, `README has a ${file} snippet`).toBeDefined();
        writeFileSync(join(project, file), block as string);
        const id = await new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [file], {
            cwd: project,
            env: { ...process.env, HERALD_URL: server.url, HERALD_API_KEY: server.apiKey },
            stdio: ["ignore", "pipe", "pipe"],
          });
          let o = "";
          let e = "";
          child.stdout.on("data", (c: Buffer) => {
            o += c.toString();
          });
          child.stderr.on("data", (c: Buffer) => {
            e += c.toString();
          });
          child.on("close", (code) =>
            code === 0 ? resolve(o.trim()) : reject(new Error(`${file}: ${e}`)),
          );
        });
        expect(id, file).toMatch(/^[0-9a-f-]{36}$/);
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
