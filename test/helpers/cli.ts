/**
 * The herald CLI run in-process against a test server, with a temporary HOME (its config
 * directory), as wrangler's tests run theirs.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { expect } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { sql } from "./db.ts";
import { notificationOf } from "./http.ts";
import { ownerPassword, type TestServer } from "./server.ts";
import { tempDir } from "./temp.ts";
import { waitFor } from "./wait.ts";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  home: string;
  stdin?: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Sees standard output as it is written (for commands that run on). */
  onStdout?: (s: string) => void;
  /** Sees standard error as it is written. */
  onStderr?: (s: string) => void;
  /** Key presses, as a terminal gives them to `listen`. */
  onKey?: (handler: (key: string) => void) => () => void;
}

/** The installed `herald` command, as a process of its own (signals reach it alone). */
export const herald = join(import.meta.dirname, "../../bin/herald.mjs");

/** Runs the installed command with this HOME against `url`, its output piped. */
export function spawnCli(
  args: string[],
  h: string,
  url: string,
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, [herald, ...args], {
    env: { ...process.env, HOME: h, XDG_CONFIG_HOME: join(h, ".config"), HERALD_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A HOME for the CLI, removed when this test file's tests are done (it holds CLI tokens). */
export const home = (): string => tempDir("herald-cli-");

export const configFile = (h: string) => join(h, ".config", "herald", "config.json");

/** The titles `listen --json` printed, one notification a line. */
export const titlesOf = (out: string): string[] =>
  out
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l).title as string);

/**
 * Waits until the stream device `herald listen` saved in HOME `h` has `n` streams open (from
 * then on what is published reaches each live); returns how many it has.
 */
export async function streamsOfMachine(server: TestServer, h: string, n: number) {
  const open = async () => {
    const device = JSON.parse(readFileSync(configFile(h), "utf8")).devices?.[0]?.id ?? "";
    const [row] = await sql<{ n: number }>(
      server.databaseUrl,
      "select count(*)::int as n from open_call where kind = 'stream' and device_id::text = $1",
      [device],
    );
    return row?.n;
  };
  await waitFor(async () => (await open()) === n, 15_000);
  return open();
}

/** A CLI bound to a server: run commands, log in, read a notification as the bootstrap key. */
export function cliFor(serverOf: () => TestServer) {
  async function cli(argv: string[], opts: CliOptions): Promise<Run> {
    const server = serverOf();
    let stdout = "";
    let stderr = "";
    const code = await runCli(argv, {
      stdout: (s) => {
        opts.onStdout?.(s);
        stdout += s;
      },
      stderr: (s) => {
        opts.onStderr?.(s);
        stderr += s;
      },
      readStdin: async () => opts.stdin,
      isTty: false,
      env: {
        HOME: opts.home,
        XDG_CONFIG_HOME: join(opts.home, ".config"),
        HERALD_URL: server.url,
        ...opts.env,
      },
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onKey ? { onKey: opts.onKey } : {}),
    });
    return { code, stdout, stderr };
  }

  /** A new HOME with the owner logged in by password. */
  async function loggedIn(): Promise<string> {
    const h = home();
    const r = await cli(["login", "--email", "owner@example.com", "--password-stdin"], {
      home: h,
      stdin: `${ownerPassword}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    return h;
  }

  const get = (id: string) => notificationOf(serverOf().url, serverOf().apiKey, id);

  /** `herald listen … --json` in HOME `h`, left running: stopped by `stop`, or after `ms`. */
  function listening(h: string, argv: string[], ms: number) {
    const stop = new AbortController();
    const seen = { out: "" };
    const done = cli(["listen", ...argv, "--json"], {
      home: h,
      signal: AbortSignal.any([stop.signal, AbortSignal.timeout(ms)]),
      onStdout: (s) => {
        seen.out += s;
      },
    });
    return { stop, done, seen };
  }

  return { cli, loggedIn, get, listening };
}

/** Waits until a device that listens to `topic` has its live stream open on the server. */
export async function streamOpen(server: TestServer, topic: string): Promise<void> {
  await waitFor(async () => {
    const [row] = await sql<{ n: number }>(
      server.databaseUrl,
      `select count(*)::int as n from open_call c join device d on d.id = c.device_id
        where c.kind = 'stream' and $1 = any(d.topics)`,
      [topic],
    );
    return (row?.n ?? 0) > 0;
  }, 15_000);
}

/**
 * Waits until `count` devices listen to `topic` (`herald listen --topic` has registered and set
 * its filter): from then on the fan-out reaches them, whether their stream is open yet or not.
 */
export async function devicesListening(server: TestServer, topic: string, count = 1) {
  const end = Date.now() + 15_000;
  for (;;) {
    const [row] = await sql<{ n: number }>(
      server.databaseUrl,
      "select count(*)::int as n from device where $1 = any(topics) and signed_out_at is null",
      [topic],
    );
    if ((row?.n ?? 0) >= count || Date.now() > end) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
