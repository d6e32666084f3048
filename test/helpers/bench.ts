/** `npm run bench`'s entry, run as a test runs it. */
import { spawn } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "../..");

/** The benchmark with these arguments and environment; all it prints, as it prints it. */
export function bench(args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", "scripts/bench/main.ts", ...args],
    { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  for (const s of [child.stdout, child.stderr]) {
    s?.on("data", (d: Buffer) => {
      out += d.toString();
    });
  }
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, exited, output: () => out };
}
