/**
 * The herald CLI run in-process against a test server, with a temporary HOME (its config
 * directory), as wrangler's tests run theirs.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { body } from "./http.ts";
import { ownerPassword, type TestServer } from "./server.ts";

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
}

export function home(): string {
  return mkdtempSync(join(tmpdir(), "herald-cli-"));
}

export const configFile = (h: string) => join(h, ".config", "herald", "config.json");

/** A CLI bound to a server: run commands, log in, read a notification as the bootstrap key. */
export function cliFor(serverOf: () => TestServer) {
  async function cli(argv: string[], opts: CliOptions): Promise<Run> {
    const server = serverOf();
    let stdout = "";
    let stderr = "";
    const code = await runCli(argv, {
      stdout: (s) => {
        stdout += s;
      },
      stderr: (s) => {
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

  const get = async (id: string) =>
    body(
      await fetch(`${serverOf().url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${serverOf().apiKey}` },
      }),
    );

  return { cli, loggedIn, get };
}
