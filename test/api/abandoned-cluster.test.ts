/**
 * An embedded PostgreSQL whose owner was SIGKILLed, on a data directory nobody starts on again
 * (the benchmark's scratch directories): `stopAbandoned` stops it, and leaves alone one whose
 * owner lives and a directory that never had an owner.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, stopAbandoned } from "../../src/db/embedded/owner.ts";
import { waitFor } from "../helpers/wait.ts";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const server = join(import.meta.dirname, "../../src/db/embedded/server.ts");

/** A process that starts an embedded PostgreSQL on `dir` and waits; resolves once it is up. */
async function owner(dir: string): Promise<ChildProcess> {
  const script = `const { startEmbeddedPostgres } = await import(${JSON.stringify(server)});
    await startEmbeddedPostgres({ dir: ${JSON.stringify(dir)} });
    console.log("up");
    setInterval(() => {}, 60_000);`;
  const child = spawn(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", "--input-type=module", "-e", script],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await waitFor(() => out.includes("up"), 60_000);
  return child;
}

describe("a data directory whose PostgreSQL outlived its owner", () => {
  it("is stopped once the owner is gone, and not while it lives", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-abandoned-"));
    dirs.push(dir);
    const child = await owner(dir);
    const postmaster = Number(
      readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0],
    );
    expect(await stopAbandoned(dir)).toBe(false);
    expect(alive(postmaster)).toBe(true);

    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // Its exit hook never ran: PostgreSQL is still up, an orphan.
    expect(alive(postmaster)).toBe(true);
    expect(await stopAbandoned(dir)).toBe(true);
    expect(alive(postmaster)).toBe(false);
  }, 90_000);

  it("leaves a directory that never had an owner (a run still starting)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-abandoned-"));
    dirs.push(dir);
    expect(await stopAbandoned(dir)).toBe(false);
  });
});
