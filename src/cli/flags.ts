/**
 * Flags as a person types them, before and after node's `parseArgs` reads them: a value that
 * begins with "-" (`--limit -3`, `-m "-5 degrees outside"`) is the flag's value, a word that
 * begins with "-" but is no flag (`notify "-5 °C"`) is a word, and what `parseArgs` refuses is
 * said in our words.
 */
import { parseArgs } from "node:util";

type Options = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

/** Whether a word that begins with "-" may be a flag: a letter follows the dashes, or it is `--`. */
const flagLike = (arg: string) => /^--?[a-z]|^--$/i.test(arg);

/**
 * `args` read as `parseArgs` reads them, but for a word that begins with "-" and cannot be a
 * flag (a negative number, "-5 °C"): it is a word where it stands. Before, `herald notify
 * "-5 °C"` was refused ("unknown option -5").
 */
export function readArgs(args: string[], options: Options) {
  const words = new Map<string, string>();
  const standIns = dashValues(args, options).map((arg, i) => {
    if (!arg.startsWith("-") || arg === "-" || flagLike(arg)) return arg;
    // A stand-in no flag begins with, put back once parsed.
    const standIn = `\0${i}`;
    words.set(standIn, arg);
    return standIn;
  });
  const parsed = parseArgs({ args: standIns, options, allowPositionals: true, strict: true });
  return { ...parsed, positionals: parsed.positionals.map((p) => words.get(p) ?? p) };
}

/**
 * `args` with each flag that takes a value written `--flag=value` where its value begins with
 * "-" and is not itself a flag. `parseArgs` takes such a value for a flag, so `history --limit
 * -3` said "--limit needs a value" (where the number is what is wrong) and `notify x -m "-5
 * degrees"` could not be sent at all.
 */
export function dashValues(args: string[], options: Options): string[] {
  const long = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) {
    long.set(`--${name}`, name);
    if (o.short) long.set(`-${o.short}`, name);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const name = long.get(arg);
    const next = args[i + 1];
    if (arg === "--") return [...out, ...args.slice(i)];
    if (
      name !== undefined &&
      options[name]?.type === "string" &&
      next?.startsWith("-") &&
      // Another flag after it is not its value (`--topic --json`: --topic needs a value).
      !flagLike(next)
    ) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** Our words for what parseArgs refused. */
export function flagProblem(e: Error & { code?: string }): string {
  const flag = /'(-{1,2}[^' ]+)/.exec(e.message)?.[1];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${flag ?? ""}`.trim();
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return `${flag ?? "an option"} needs a value`;
    default:
      return e.message;
  }
}
