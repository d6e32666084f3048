/**
 * The `herald` CLI. `runCli` takes argv and I/O and returns the exit code, so that tests run it
 * in-process; `bin/herald.mjs` is the installed entry.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "./command.ts";
import { accountDelete, accountPassword, tokensList } from "./commands/account.ts";
import { ask } from "./commands/ask.ts";
import { login, logout, whoami } from "./commands/auth.ts";
import { devices } from "./commands/devices.ts";
import { history } from "./commands/history.ts";
import { hooks } from "./commands/hooks.ts";
import { keys } from "./commands/keys.ts";
import { ack, listen } from "./commands/listen.ts";
import { mcp } from "./commands/mcp.ts";
import { notify } from "./commands/notify.ts";
import { projects } from "./commands/projects.ts";
import { run } from "./commands/run.ts";
import { webhooks } from "./commands/webhooks.ts";
import { Context, describeFailure, exit, type Io } from "./context.ts";
import { flagProblem, readArgs } from "./flags.ts";
import { drained, flushed, keysOnTerminal, promptOnTerminal, readStdin } from "./stdio.ts";
import { stopOnEndingSignals } from "./stopping.ts";

export const commands: Command[] = [
  login,
  logout,
  whoami,
  notify,
  run,
  listen,
  ack,
  ask,
  mcp,
  ...projects,
  ...keys,
  ...webhooks,
  ...hooks,
  ...devices,
  ...history,
  tokensList,
  accountPassword,
  accountDelete,
];

export const globalOptions = {
  url: { type: "string" },
  "api-key": { type: "string" },
  token: { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** The version of the installed CLI (the package's). */
function version(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ["../..", "../../.."]) {
    try {
      const pkg = JSON.parse(readFileSync(join(here, up, "package.json"), "utf8")) as {
        version: string;
        name: string;
      };
      if (pkg.name === "herald" || pkg.name === "@herald/client") return pkg.version;
    } catch {
      // not there: try further up (the packed CLI sits one level deeper)
    }
  }
  return "unknown";
}

/** `herald help COMMAND`: usage, every flag with its default, and an example. */
function commandHelp(c: Command): string {
  const flags = Object.entries(c.options).map(([name, o]) => {
    const short = "short" in o && o.short ? `-${o.short}, ` : "    ";
    return `  ${short}--${name.padEnd(18)} ${c.flags?.[name] ?? (o.type === "boolean" ? "on/off" : "")}`;
  });
  return [
    `herald ${c.name}: ${c.summary}`,
    "",
    `usage: ${c.usage}`,
    ...(flags.length > 0 ? ["", "options:", ...flags] : []),
    "",
    "global options: --url URL  --api-key KEY  --token TOKEN  --project P  --json",
    ...(c.example ? ["", "example:", `  ${c.example}`] : []),
    "",
  ].join("\n");
}

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    "herald: private push notifications to your own devices",
    "",
    "usage: herald COMMAND [options]",
    "",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "global options: --url URL  --api-key KEY  --token TOKEN  --project P  --json",
    "environment:    HERALD_URL  HERALD_API_KEY  HERALD_TOKEN  HERALD_PROJECT",
    "exit codes:     0 ok, 1 failed, 2 usage, 3 not logged in or not allowed, 4 server unreachable",
    "",
  ].join("\n");
}

/** No command named: the version, help (general or of a command), or an unknown command. */
function withoutCommand(head: string[], io: Io): number {
  if (head[0] === "--version" || head[0] === "-v" || head[0] === "version") {
    io.stdout(`herald ${version()}\n`);
    return exit.ok;
  }
  if (head[0] === "help" && head.length > 1) {
    const wanted = head.slice(1, 3).join(" ");
    const c = commands.find((x) => x.name === wanted) ?? commands.find((x) => x.name === head[1]);
    if (c) {
      io.stdout(commandHelp(c));
      return exit.ok;
    }
  }
  if (head.length === 0 || head[0] === "help" || head.includes("--help") || head.includes("-h")) {
    io.stdout(help());
    return exit.ok;
  }
  io.stderr(`herald: ${unknownCommand(head)}\n`);
  return exit.usage;
}

/** Edits (insert, delete, change) from `a` to `b`: how far a typo is from a name. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + change);
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

/** The name among `names` nearest a typo of it (two edits at most, and half of it at most). */
function nearest(typo: string, names: string[]): string | undefined {
  const close = names
    .map((n) => ({ n, d: distance(typo.toLowerCase(), n) }))
    .filter((x) => x.d <= Math.min(2, Math.floor(x.n.length / 2)))
    .sort((x, y) => x.d - y.d);
  return close[0]?.n;
}

/**
 * What to say of a command that is not one: of a group (`keys frob`), what the group takes; of a
 * typo (`notfy`), the nearest command. Before, the whole help followed, the line above it.
 */
function unknownCommand(head: string[]): string {
  const [first = "", second] = head;
  const group = commands
    .filter((c) => c.name.startsWith(`${first} `))
    .map((c) => c.name.slice(first.length + 1));
  if (group.length > 0) {
    const near = second === undefined ? undefined : nearest(second, group);
    const what =
      second === undefined
        ? `"herald ${first}" needs one of`
        : `unknown command "${first} ${second}"; ${first} takes`;
    const hint = near ? `; did you mean "herald ${first} ${near}"?` : "";
    return `${what}: ${group.join(", ")}${hint}`;
  }
  const near = nearest(first, [...new Set(commands.map((c) => c.name.split(" ")[0] ?? ""))]);
  const hint = near ? ` did you mean "herald ${near}"?` : "";
  return `unknown command "${first}";${hint} herald help lists every command`;
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const dash = argv.indexOf("--");
  const head = dash < 0 ? argv : argv.slice(0, dash);
  const command =
    commands.find((c) => c.name.includes(" ") && head.slice(0, 2).join(" ") === c.name) ??
    commands.find((c) => !c.name.includes(" ") && head[0] === c.name);
  if (!command) return withoutCommand(head, io);
  // After `--`: the command line `herald run` runs; for the others, words, as the convention
  // is (`herald notify -- "-f failed"`). Before, they were dropped ("a title is required").
  const rest = command.takesCommand && dash >= 0 ? argv.slice(dash + 1) : [];
  const args = command.takesCommand ? head : argv;
  const words = command.name.split(" ").length;
  let parsed: ReturnType<typeof readArgs>;
  const options = { ...globalOptions, ...command.options };
  try {
    parsed = readArgs(args.slice(words), options);
  } catch (e) {
    io.stderr(
      `herald ${command.name}: ${flagProblem(e as Error & { code?: string })}\nusage: ${command.usage}\nmore: herald help ${command.name}\n`,
    );
    return exit.usage;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    io.stdout(commandHelp(command));
    return exit.ok;
  }
  const ctx = new Context(io, {
    ...(typeof values.url === "string" ? { url: values.url } : {}),
    ...(typeof values["api-key"] === "string" ? { apiKey: values["api-key"] } : {}),
    ...(typeof values.token === "string" ? { token: values.token } : {}),
    ...(typeof values.project === "string" ? { project: values.project } : {}),
    json: values.json === true,
  });
  try {
    return await command.run(ctx, { values: parsed.values, positionals: parsed.positionals, rest });
  } catch (err) {
    const failure = describeFailure(err, ctx.credentialSource);
    if (ctx.flags.json) {
      const { message, exitCode, code, requestId } = failure;
      io.stdout(
        `${JSON.stringify({ error: { code, message, ...(requestId ? { request_id: requestId } : {}) }, exit_code: exitCode })}\n`,
      );
    }
    io.stderr(`herald: ${failure.message}\n`);
    return failure.exitCode;
  }
}

/** The process entry: real stdio; an ending signal stops the command as Ctrl-C does (stopping.ts). */
export async function main(): Promise<void> {
  const stop = stopOnEndingSignals();
  // Its reader gone (`| head` has its lines): the command stops as Ctrl-C stops it, quietly.
  // Output that cannot be written otherwise (a full disk) stops it too, saying why (exit 1).
  // Stderr's reader gone (`2>&1 | head`): nobody is left to tell, and the exit code stays the
  // command's (an unhandled EPIPE made it 1).
  process.stderr.on("error", () => undefined);
  let told = false;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE" && !told)
      process.stderr.write(`herald: cannot write its output: ${err.message}\n`);
    told = true;
    stop.outputFailed(err);
  });
  const code = await runCli(process.argv.slice(2), {
    stdout: (s) => {
      if (!process.stdout.destroyed) process.stdout.write(s);
    },
    drained: () => drained(stop.abort.signal),
    stderr: (s) => process.stderr.write(s),
    readStdin: (waitMs) => readStdin(waitMs),
    isTty: Boolean(process.stdout.isTTY && process.stdin.isTTY),
    env: process.env,
    signal: stop.abort.signal,
    prompt: promptOnTerminal,
    ...(process.stdin.isTTY ? { onKey: keysOnTerminal(stop.abort) } : {}),
    onEndingSignal: stop.onEndingSignal,
  });
  // A write's failure is told a tick or more after it: heard before the exit code is chosen.
  await flushed();
  process.exitCode = stop.exitCode(code);
}
