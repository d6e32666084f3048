import type { ParseArgsConfig } from "node:util";
import type { Context } from "./context.ts";

export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
  /** What followed `--`, for a command that `takesCommand` (`herald run`). */
  rest: string[];
}

/** One CLI command: its flags, its help, and what it does. Returns the exit code. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  /** What each flag does, and its default where it has one: `herald help COMMAND` shows it. */
  flags?: Record<string, string>;
  /** One example a person can copy. */
  example?: string;
  /** What follows `--` is a command line to run (`rest`), not more words. */
  takesCommand?: true;
  run(ctx: Context, args: Parsed): Promise<number>;
}
