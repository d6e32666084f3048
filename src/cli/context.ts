/**
 * What every command gets: its I/O, the resolved server URL and credentials (flags, then
 * HERALD_* variables, then the config file), the config store, and clients of the API.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { HeraldError } from "../sdk/errors.ts";

export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Standard input as text, or undefined when it is a terminal. */
  readStdin: () => Promise<string | undefined>;
  isTty: boolean;
  env: Record<string, string | undefined>;
  /** Asks on the terminal; `hidden` does not echo (passwords). Absent when not interactive. */
  prompt?: (question: string, hidden: boolean) => Promise<string>;
  /** Ends long-running commands (`listen`); SIGINT in the real CLI. */
  signal?: AbortSignal;
}

/** What `herald login` and `herald listen` remember. Written with mode 0600. */
export interface SavedConfig {
  url?: string;
  token?: string;
  project?: string;
  email?: string;
  device?: { id: string; credential: string; cursor?: string };
}

/** Documented exit codes (docs/cli.md). */
export const exit = { ok: 0, failed: 1, usage: 2, auth: 3, network: 4 } as const;

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = exit.failed) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function configPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "herald", "config.json");
}

export class ConfigStore {
  readonly path: string;
  constructor(path: string) {
    this.path = path;
  }
  load(): SavedConfig {
    try {
      return JSON.parse(readFileSync(this.path, "utf8")) as SavedConfig;
    } catch {
      return {};
    }
  }
  /** Writes with mode 0600 and re-applies it, in case the file was loosened since. */
  save(config: SavedConfig): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    writeFileSync(this.path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    chmodSync(this.path, 0o600);
  }
  update(change: (c: SavedConfig) => SavedConfig): SavedConfig {
    const next = change(this.load());
    this.save(next);
    return next;
  }
}

export interface GlobalFlags {
  url?: string;
  apiKey?: string;
  token?: string;
  project?: string;
  json: boolean;
}

export class Context {
  readonly io: Io;
  readonly flags: GlobalFlags;
  readonly config: ConfigStore;
  #saved: SavedConfig | undefined;

  constructor(io: Io, flags: GlobalFlags) {
    this.io = io;
    this.flags = flags;
    this.config = new ConfigStore(configPath(io.env));
  }

  /** The config file as it was when the command started: read once, not per lookup. */
  get #file(): SavedConfig {
    this.#saved ??= this.config.load();
    return this.#saved;
  }

  get url(): string {
    return this.flags.url ?? this.io.env.HERALD_URL ?? this.#file.url ?? "http://127.0.0.1:8080";
  }

  get project(): string | undefined {
    return this.flags.project ?? this.io.env.HERALD_PROJECT ?? this.#file.project;
  }

  /** An API key or CLI token to publish and read with. */
  get publisherSecret(): string {
    const secret =
      this.flags.apiKey ??
      this.flags.token ??
      this.io.env.HERALD_API_KEY ??
      this.io.env.HERALD_TOKEN ??
      this.#file.token;
    if (!secret)
      throw new CliError("not logged in: run `herald login`, or set HERALD_API_KEY", exit.auth);
    return secret;
  }

  /** A CLI token, for managing the account. */
  get ownerToken(): string {
    const token = this.flags.token ?? this.io.env.HERALD_TOKEN ?? this.#file.token;
    if (!token) throw new CliError("not logged in: run `herald login`", exit.auth);
    return token;
  }

  client<S extends DescService>(service: S): Client<S> {
    return createClient(service, createConnectTransport({ baseUrl: this.url, httpVersion: "1.1" }));
  }

  headers(secret: string): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${secret}` };
    if (this.project) h["herald-project"] = this.project;
    return h;
  }

  out(human: string, json: unknown): void {
    this.io.stdout(
      this.flags.json
        ? `${JSON.stringify(json, null, 2)}\n`
        : human.endsWith("\n")
          ? human
          : `${human}\n`,
    );
  }
}

/** Turns any failure into a message that names the problem and the fix, and an exit code. */
export function describeFailure(err: unknown): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  const e = HeraldError.from(err);
  switch (e.code) {
    case "network":
      return {
        message: `cannot reach the Herald server (${e.message}): check HERALD_URL or --url`,
        exitCode: exit.network,
      };
    case "unauthenticated":
      return {
        message: `${e.message}: run \`herald login\` (or check HERALD_API_KEY)`,
        exitCode: exit.auth,
      };
    case "permission_denied":
      return { message: `${e.message}: this credential may not do that`, exitCode: exit.auth };
    case "invalid_argument":
      return {
        message: `invalid request:\n${e.violations.map((v) => `  ${v.field}: ${v.message}`).join("\n") || `  ${e.message}`}`,
        exitCode: exit.usage,
      };
    default:
      return {
        message: `${e.code}: ${e.message}${e.requestId ? ` (request ${e.requestId})` : ""}`,
        exitCode: exit.failed,
      };
  }
}
