/**
 * The CLI's config file: the saved login, the project in use, and the stream devices `herald
 * listen` registered. Written whole or not at all (whole-file.ts). Before, it was rewritten in
 * place, and a write that failed half way (a full disk, as `herald listen` saves its place after
 * every notification) left it cut short: the login and the devices' credentials were lost with
 * it, the devices staying signed in at their server, unread.
 */
import { readFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { makeFolders } from "../data-dir.ts";
import { replaceWhole } from "../whole-file.ts";
import { CliError, exit } from "./failure.ts";
import type { SavedDevice } from "./saved-devices.ts";

/** What `herald login` and `herald listen` remember. Written with mode 0600. */
export interface SavedConfig {
  url?: string;
  token?: string;
  project?: string;
  email?: string;
  /** The account the token is of (saved since logins replace each other: retire.ts). */
  accountId?: string;
  /** The stream devices `herald listen` registered, each of its server and account. */
  devices?: SavedDevice[];
  /** The one device saved before devices had their server: read as the saved login's. */
  device?: { id: string; credential: string; cursor?: string };
}

export function configPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "herald", "config.json");
}

/** The file a symbolic link at `path` points to (a config kept with dotfiles), or `path`. */
function target(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
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
  /**
   * Replaces the file with `config`, mode 0600 (so a file loosened since is tightened again), or
   * throws, the file as it was. Renaming is atomic: a reader, or a process killed at any point,
   * sees the old file or the new one.
   */
  save(config: SavedConfig): void {
    makeFolders(dirname(this.path), 0o700);
    try {
      replaceWhole(target(this.path), `${JSON.stringify(config, null, 2)}\n`, 0o600);
    } catch (err) {
      throw new CliError(
        `cannot save ${this.path} (${(err as Error).message}); it is as it was before`,
        exit.failed,
        { cause: err },
      );
    }
  }
  update(change: (c: SavedConfig) => SavedConfig): SavedConfig {
    const next = change(this.load());
    this.save(next);
    return next;
  }
}
