import type { ParseArgsConfig } from "node:util";
import type { Context } from "./context.ts";

export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
  /** What followed `--` (for `herald run`). */
  rest: string[];
}

/** One CLI command: its flags, its help, and what it does. Returns the exit code. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  run(ctx: Context, args: Parsed): Promise<number>;
}
