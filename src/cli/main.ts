/**
 * The `herald` CLI. `runCli` takes argv and I/O and returns the exit code, so that tests run it
 * in-process; `bin/herald.mjs` is the installed entry.
 */
import { fstatSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
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
import { CliError, Context, describeFailure, exit, type Io } from "./context.ts";
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
  io.stderr(`herald: unknown command ${JSON.stringify(head.slice(0, 2).join(" "))}\n\n${help()}`);
  return exit.usage;
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const dash = argv.indexOf("--");
  const head = dash < 0 ? argv : argv.slice(0, dash);
  const rest = dash < 0 ? [] : argv.slice(dash + 1);
  const command =
    commands.find((c) => c.name.includes(" ") && head.slice(0, 2).join(" ") === c.name) ??
    commands.find((c) => !c.name.includes(" ") && head[0] === c.name);
  if (!command) return withoutCommand(head, io);
  const words = command.name.split(" ").length;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: head.slice(words),
      options: { ...globalOptions, ...command.options },
      allowPositionals: true,
      strict: true,
    });
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

/** Our words for what parseArgs refused. */
function flagProblem(e: Error & { code?: string }): string {
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

/** Reads one line from the terminal; with `hidden`, what is typed is not echoed. */
function promptOnTerminal(question: string, hidden: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Ctrl-C (readline takes it as a key) or Ctrl-D: nothing is done, as a "no" would. Before,
    // the prompt never settled and Node ended the process with a warning (exit 13).
    let answered = false;
    rl.on("SIGINT", () => rl.close());
    rl.on("close", () => {
      if (answered) return;
      process.stderr.write("\n");
      reject(new CliError("canceled: nothing done", exit.canceled));
    });
    if (hidden) {
      // readline echoes through _writeToOutput; print the question only.
      (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
        if (s.startsWith(question)) process.stderr.write(question);
      };
    }
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      if (hidden) process.stderr.write("\n");
      resolve(answer);
    });
  });
}

/**
 * Standard input, when it is a file or a pipe (a terminal, or /dev/null in a CI step, has
 * nothing to say). With `waitMs`, a pipe that says nothing within that time is left alone.
 */
async function readStdin(waitMs?: number): Promise<string | undefined> {
  const st = fstatSync(0);
  if (process.stdin.isTTY || !(st.isFIFO() || st.isFile())) return undefined;
  if (waitMs !== undefined && st.isFIFO()) {
    const spoke = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), waitMs);
      process.stdin.once("readable", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!spoke) {
      process.stdin.pause();
      process.stdin.unref?.();
      return undefined;
    }
  }
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Key presses from a terminal, in raw mode while someone listens (Ctrl-C then arrives as a key,
 * not a signal: it aborts as SIGINT would). Ctrl-Z too arrives as a key: the terminal is given
 * back and the job stopped (SIGTSTP to its process group, as the terminal would send), and the
 * keys are taken again when it runs again (`fg`).
 */
function keysOnTerminal(abort: AbortController) {
  return (handler: (key: string) => void) => {
    const raw = () => process.stdin.setRawMode(true);
    const suspend = () => {
      process.stdin.setRawMode(false);
      // Discarded when no shell's job control stands above it (an orphaned process group).
      process.kill(0, "SIGTSTP");
      raw();
    };
    const onData = (d: Buffer) => {
      for (const key of d.toString("utf8")) {
        if (key === "\x03") abort.abort();
        else if (key === "\x1a") suspend();
        else handler(key);
      }
    };
    raw();
    process.on("SIGCONT", raw);
    process.stdin.on("data", onData);
    process.stdin.resume();
    return () => {
      process.off("SIGCONT", raw);
      process.stdin.off("data", onData);
      process.stdin.setRawMode(false);
      process.stdin.pause();
    };
  };
}

/** The process entry: real stdio; an ending signal stops the command as Ctrl-C does (stopping.ts). */
export async function main(): Promise<void> {
  const stop = stopOnEndingSignals();
  const code = await runCli(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    readStdin: (waitMs) => readStdin(waitMs),
    isTty: Boolean(process.stdout.isTTY && process.stdin.isTTY),
    env: process.env,
    signal: stop.abort.signal,
    prompt: promptOnTerminal,
    ...(process.stdin.isTTY ? { onKey: keysOnTerminal(stop.abort) } : {}),
    onEndingSignal: stop.onEndingSignal,
  });
  process.exitCode = stop.exitCode(code);
}
