import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

export interface HeraldProcess {
  child: ChildProcess;
  url: string;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  exited: Promise<number | null>;
}

/** Runs `node src/main.ts` as a user would, and waits until it has started (every process). */
export async function spawnHerald(
  env: Record<string, string>,
  opts: { ownGroup?: boolean } = {},
): Promise<HeraldProcess> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "../../src/main.ts")], {
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
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /Server listening at (http:\/\/[\d.:]+)/.exec(out);
      // Started: the last line of the start's own message (first start or not), which a
      // supervisor prints once every serving process listens.
      const started = /^(Herald is running|Sign-up is (open|closed))/m.test(out);
      if (m?.[1] && started) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`herald exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return { child, url, stdout: () => out, stderr: () => err, exited };
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
