/**
 * Flags as a person types them, before and after node's `parseArgs` reads them: a value that
 * begins with "-" (`--limit -3`, `-m "-5 degrees outside"`) is the flag's value, and what
 * `parseArgs` refuses is said in our words.
 */

type Options = Record<string, { type: "string" | "boolean"; short?: string }>;

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
      !/^--?[a-z]|^--$/i.test(next)
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
