import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll } from "vitest";

/** `npm start`'s entry, and that of the operator's commands (`node scripts/run.mjs ops/…`). */
export const runScript = join(import.meta.dirname, "../../scripts/run.mjs");

export interface HeraldProcess {
  child: ChildProcess;
  url: string;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts `npm start`'s command (scripts/run.mjs: the build in dist/server, which the test
 * setup made) as a user would, without waiting for it. The child is the supervisor. */
/**
 * Every Herald a test file started and that still runs: asked to stop (SIGTERM, which stops its
 * PostgreSQL too) when the file's process exits, so a test that fails half-way leaves nothing
 * running.
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGTERM");
});
// Also when the file's tests end, failed or not: a test runner may end its worker by a signal,
// which runs no "exit" listener (a failed test in CI left a Herald and its database running).
afterAll(async () => {
  const left = [...running];
  for (const child of left) child.kill("SIGTERM");
  await Promise.all(
    left.map(
      (c) => new Promise((resolve) => (c.exitCode !== null ? resolve(0) : c.once("exit", resolve))),
    ),
  );
}, 60_000);

export function launchHerald(
  env: Record<string, string>,
  opts: { ownGroup?: boolean } = {},
): HeraldProcess {
  const child = spawn(process.execPath, [runScript, "main"], {
    env: { ...process.env, HERALD_PORT: "0", DATABASE_URL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own, as a terminal gives a foreground job: Ctrl-C goes to the group.
    detached: opts.ownGroup === true,
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, url: "", stdout: () => out, stderr: () => err, exited };
}

/** Starts Herald (launchHerald) and waits until it has started (every process). */
export async function spawnHerald(
  env: Record<string, string>,
  opts: { ownGroup?: boolean } = {},
): Promise<HeraldProcess> {
  const proc = launchHerald(env, opts);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const out = proc.stdout();
      const m = /Server listening at (http:\/\/[\d.:]+)/.exec(out);
      // Started: the last line of the start's own message (first start or not), which the
      // supervisor prints once every serving process listens.
      const started = /^(Herald \S+ is running|Sign-up is (open|closed))/m.test(out);
      if (m?.[1] && started) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 50);
    void proc.exited.then((code) => {
      clearInterval(timer);
      reject(
        new Error(
          `herald exited with ${code} before listening:\n${proc.stdout()}\n${proc.stderr()}`,
        ),
      );
    });
  });
  return { ...proc, url };
}

export function keyFrom(stdout: string): string | undefined {
  return /^HERALD_API_KEY=(hk_\w+)$/m.exec(stdout)?.[1];
}

/** The key the first start prints just after it starts listening; waits for the line. */
export async function waitForKey(proc: HeraldProcess, ms = 10_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const key = keyFrom(proc.stdout());
    if (key) return key;
    if (Date.now() > end) throw new Error(`no HERALD_API_KEY line:\n${proc.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Herald's JSON log lines (supervisor's and serving processes') whose message starts with `prefix`. */
export function logLines(out: string, prefix: string): Record<string, unknown>[] {
  return out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l.msg === "string" && l.msg.startsWith(prefix));
}

/** Publishes `title` over REST to a started Herald with `key`, given up after `timeoutMs`. */
export const publisher = (proc: HeraldProcess, key: string, timeoutMs: number) => (title: string) =>
  fetch(`${proc.url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ title }),
    signal: AbortSignal.timeout(timeoutMs),
  });

export interface Ran {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node scripts/run.mjs <args>` (an operator's command) to its end, in a process group of
 * its own. Past `deadlineMs` the group is asked to stop (SIGTERM) and killed 5 s later: a
 * command deaf to SIGTERM (one that spun on a data directory under /proc did) ends with the
 * test. spawnSync's `timeout` sends one signal and then waits for the exit, for ever if need be.
 */
export function runOperator(
  args: string[],
  env: Record<string, string | undefined>,
  deadlineMs = 60_000,
): Promise<Ran> {
  const child = spawn(process.execPath, [runScript, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  running.add(child);
  const out = { stdout: "", stderr: "" };
  child.stdout?.on("data", (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out.stderr += d.toString();
  });
  const group = (signal: NodeJS.Signals) => () => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // The group is gone.
    }
  };
  const term = setTimeout(group("SIGTERM"), deadlineMs);
  const kill = setTimeout(group("SIGKILL"), deadlineMs + 5_000);
  return new Promise((resolve) =>
    // "close": the exit, and stdout and stderr read to their ends.
    child.once("close", (status, signal) => {
      clearTimeout(term);
      clearTimeout(kill);
      running.delete(child);
      resolve({ status, signal, ...out });
    }),
  );
}
