/**
 * Builds `@herald/client` (the Node SDK and the `herald` CLI) from this repository into a folder
 * that `npm pack`/`npm publish` can take: plain ESM JavaScript with type declarations, and a
 * manifest whose dependencies are only the client libraries (Connect, protobuf, and the MCP SDK
 * with zod for `herald mcp`), so that installing the SDK or the CLI never pulls in the server
 * (Fastify, MikroORM, provider SDKs).
 *
 *   node scripts/build-clients.ts [OUT_DIR]      (default: dist/client)
 */
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const out = resolve(process.argv[2] ?? join(root, "dist/client"));
const clientDependencies = [
  "@bufbuild/protobuf",
  "@bufbuild/protovalidate",
  "@connectrpc/connect",
  "@connectrpc/connect-node",
  // `herald mcp`: the MCP server for local agents, and the schemas of its tools.
  "@modelcontextprotocol/sdk",
  "zod",
];

rmSync(out, { recursive: true, force: true });
const require = createRequire(import.meta.url);
const tsc = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], {
  stdio: "inherit",
});

const server = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  license: string;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
};
const dependencies = Object.fromEntries(
  clientDependencies.map((name) => {
    const range = server.dependencies[name];
    if (!range) throw new Error(`${name} is not a dependency of the server package`);
    return [name, range];
  }),
);
writeFileSync(
  join(out, "package.json"),
  `${JSON.stringify(
    {
      name: "@herald/client",
      version: server.version,
      description:
        "Herald's Node SDK and the herald CLI: private push notifications to your own devices.",
      license: server.license,
      type: "module",
      engines: server.engines,
      // One ES module build for both: `import`, and `require` (Node ≥ 22.12 loads ES modules
      // with require; the engines field asks for 22.17).
      exports: {
        ".": {
          types: "./src/sdk/index.d.ts",
          import: "./src/sdk/index.js",
          require: "./src/sdk/index.js",
          default: "./src/sdk/index.js",
        },
      },
      types: "./src/sdk/index.d.ts",
      bin: { herald: "./src/cli/entry.js" },
      dependencies,
    },
    null,
    2,
  )}\n`,
);
// The package's README: the SDK's and the CLI's documentation.
writeFileSync(
  join(out, "README.md"),
  `# @herald/client\n\nThe Node SDK and the \`herald\` CLI of Herald, private push notifications to your own devices.\n\n${readFileSync(join(root, "docs/sdk.md"), "utf8")}\n\n${readFileSync(join(root, "docs/cli.md"), "utf8")}`,
);
const entry = join(out, "src/cli/entry.js");
writeFileSync(entry, `#!/usr/bin/env node\n${readFileSync(entry, "utf8")}`);
chmodSync(entry, 0o755);
process.stdout.write(`built @herald/client into ${out}\n`);
