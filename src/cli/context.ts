/**
 * What every command gets: its I/O, the resolved server URL and credentials (flags, then
 * HERALD_* variables, then the config file), the config store, and clients of the API.
 */
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { EndingSignal } from "../ending-signals.ts";
import { HeraldError } from "../sdk/errors.ts";
import { isServerUrl } from "../sdk/server-url.ts";
import { ConfigStore, configPath, type SavedConfig } from "./config-store.ts";
import { CliError, exit } from "./failure.ts";

export type { SavedConfig } from "./config-store.ts";
export { CliError, exit } from "./failure.ts";

export interface Io {
  stdout: (s: string) => void;
  /**
   * Whether stdout took what was written to it: resolves once it has (at once unless a pipe's
   * reader is behind), false if it closed or the command was stopped first. `listen` confirms
   * what it handed on, and takes no more while its reader does not. Absent in-process.
   */
  drained?: () => Promise<boolean>;
  stderr: (s: string) => void;
  /**
   * Standard input as text, or undefined when it is a terminal. With `waitMs`, also undefined
   * when nothing arrives within that time (a pipe whose writer has not written: `sleep 8 |`).
   */
  readStdin: (waitMs?: number) => Promise<string | undefined>;
  isTty: boolean;
  env: Record<string, string | undefined>;
  /** Asks on the terminal; `hidden` does not echo (passwords). Absent when not interactive. */
  prompt?: (question: string, hidden: boolean) => Promise<string>;
  /**
   * Ends long-running commands (`listen`, `ask`, `login --device`, `mcp`); in the real CLI, the
   * first ending signal (cli/stopping.ts).
   */
  signal?: AbortSignal;
  /**
   * Single key presses on the terminal (`herald listen`'s `a` to acknowledge), while the
   * returned function has not been called. Absent when standard input is no terminal.
   */
  onKey?: (handler: (key: string) => void) => () => void;
  /**
   * The ending signals this process receives (ending-signals.ts), while the returned function
   * has not been called: `herald run` passes them on to its command. Absent in-process.
   */
  onEndingSignal?: (handler: (signal: EndingSignal) => void) => () => void;
}

/** A credential the CLI will use, and where it came from (a flag, a variable, the saved login). */
export interface Credential {
  secret: string;
  kind: "API key" | "CLI token";
  source: string;
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

  /**
   * The server's URL, first found of --url, HERALD_URL, the saved login. One without its scheme
   * (`herald.example.com`) was taken for the server being down: "cannot reach the Herald server
   * (Invalid URL)", exit 4. It is a usage error, naming where it came from.
   */
  get url(): string {
    const given: [string | undefined, string][] = [
      [this.flags.url, "--url"],
      [this.io.env.HERALD_URL, "HERALD_URL"],
      [this.#file.url, this.config.path],
    ];
    const found = given.find((g): g is [string, string] => g[0] !== undefined);
    if (!found) return "http://127.0.0.1:8080";
    const [url, from] = found;
    if (!isServerUrl(url)) {
      throw new CliError(
        `${from} is "${url}", not a server's URL: give it whole, as https://herald.example.com or http://127.0.0.1:8080`,
        exit.usage,
      );
    }
    return url;
  }

  get project(): string | undefined {
    return this.flags.project ?? this.io.env.HERALD_PROJECT ?? this.#file.project;
  }

  /**
   * The credential that publishes and reads, first found of: --api-key, --token, HERALD_API_KEY,
   * HERALD_TOKEN, the saved login. `whoami` shows this very choice.
   */
  get publisher(): Credential | undefined {
    const saved = `saved login (${this.config.path})`;
    const candidates: [string | undefined, Credential["kind"], string][] = [
      [this.flags.apiKey, "API key", "--api-key"],
      [this.flags.token, "CLI token", "--token"],
      [this.io.env.HERALD_API_KEY, "API key", "HERALD_API_KEY"],
      [this.io.env.HERALD_TOKEN, "CLI token", "HERALD_TOKEN"],
      [this.#file.token, "CLI token", saved],
    ];
    const found = candidates.find(([secret]) => secret);
    return found && { secret: found[0] as string, kind: found[1], source: found[2] };
  }

  /** The CLI token that manages the account: --token, HERALD_TOKEN, or the saved login. */
  get owner(): Credential | undefined {
    const candidates: [string | undefined, string][] = [
      [this.flags.token, "--token"],
      [this.io.env.HERALD_TOKEN, "HERALD_TOKEN"],
      [this.#file.token, `saved login (${this.config.path})`],
    ];
    const found = candidates.find(([secret]) => secret);
    return found && { secret: found[0] as string, kind: "CLI token", source: found[1] };
  }

  /** Where the credential of the current command came from, for error messages. */
  credentialSource: string | undefined;

  /** An API key or CLI token to publish and read with. */
  get publisherSecret(): string {
    const c = this.publisher;
    if (!c)
      throw new CliError("not logged in: run `herald login`, or set HERALD_API_KEY", exit.auth);
    this.credentialSource = c.source;
    return c.secret;
  }

  /** A CLI token, for managing the account. */
  get ownerToken(): string {
    const c = this.owner;
    if (!c) {
      // An API key at hand is not a login: say so, not just "not logged in" to someone who set one.
      const key = this.publisher;
      const why = key
        ? ` (the API key from ${key.source} publishes and reads its project; receiving and managing the account take a CLI token)`
        : "";
      throw new CliError(`not logged in: run \`herald login\`${why}`, exit.auth);
    }
    this.credentialSource = c.source;
    return c.secret;
  }

  /** A client of the server in use, or of the one at `url`. */
  client<S extends DescService>(service: S, url = this.url): Client<S> {
    return createClient(service, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
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
export function describeFailure(
  err: unknown,
  credentialSource?: string,
): { message: string; exitCode: number; code: string; requestId?: string } {
  if (err instanceof CliError) {
    const code =
      err.exitCode === exit.usage
        ? "usage"
        : err.exitCode === exit.auth
          ? "not_logged_in"
          : "failed";
    return { message: err.message, exitCode: err.exitCode, code };
  }
  const e = HeraldError.from(err);
  const from = credentialSource ? ` (the credential came from ${credentialSource})` : "";
  const result = (message: string, exitCode: number) => ({
    message,
    exitCode,
    code: e.code,
    ...(e.requestId ? { requestId: e.requestId } : {}),
  });
  switch (e.code) {
    case "network":
      return result(
        `cannot reach the Herald server (${e.message}): check HERALD_URL or --url`,
        exit.network,
      );
    case "unauthenticated":
      return result(`${e.message}${from}: run \`herald login\` or give a valid key`, exit.auth);
    case "permission_denied":
      // The server's message says what is missing and how to get it.
      return result(`${e.message}${from}`, exit.auth);
    case "invalid_argument":
      return result(
        `invalid request:\n${e.violations.map((v) => `  ${v.field}: ${v.message}`).join("\n") || `  ${e.message}`}`,
        exit.usage,
      );
    default:
      return result(
        `${e.code}: ${e.message}${e.requestId ? ` (request ${e.requestId})` : ""}`,
        exit.failed,
      );
  }
}
