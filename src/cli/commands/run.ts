/**
 * `herald run [notify options] -- COMMAND …`: runs the command with its stdio passed through,
 * then publishes one notification with its exit code, duration and host, and the last lines of
 * its output (secrets redacted), and exits with the command's own exit code.
 */
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { basename } from "node:path";
import { monotonicMs } from "../../domain/clock.ts";
import { signalExitCode } from "../../ending-signals.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { wholeFlag } from "../format.ts";
import { redactSecrets } from "../redact.ts";
import { notificationJson, notifyFlags, notifyInput, notifyOptions, publish } from "./notify.ts";

function tailLines(buffer: string, n: number): string {
  const lines = buffer.replace(/\n$/, "").split("\n");
  return lines.slice(Math.max(0, lines.length - n)).join("\n");
}

/** At most `max` characters, cut after a whole word where there is one in the second half. */
function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(" ", max - 1);
  return `${text.slice(0, cut > max / 2 ? cut : max - 1)}…`;
}

/** Runs the command with its output passed through; its exit code, the signal that ended it. */
function runCommand(
  ctx: Context,
  cmd: string,
  args: string[],
): Promise<{ code: number; endedBy?: NodeJS.Signals; output: string }> {
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-64 * 1024);
  };
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      stdio: ["inherit", "pipe", "pipe"],
      env: ctx.io.env as NodeJS.ProcessEnv,
    });
    child.stdout.on("data", (c: Buffer) => {
      ctx.io.stdout(c.toString("utf8"));
      keep(c);
    });
    child.stderr.on("data", (c: Buffer) => {
      ctx.io.stderr(c.toString("utf8"));
      keep(c);
    });
    // Asked to end (a `kill`, a CI job cancelled), herald passes it on and waits, as npm does:
    // the command is not left running unseen, and its end is still reported.
    const forget = ctx.io.onEndingSignal?.((signal) => child.kill(signal));
    child.on("error", (e) => {
      forget?.();
      ctx.io.stderr(`herald: cannot run ${cmd}: ${e.message}\n`);
      resolve({ code: 127, output });
    });
    child.on("close", (c, signal) => {
      forget?.();
      const code = c ?? (signal ? signalExitCode(signal) : 1);
      resolve({ code, ...(signal ? { endedBy: signal } : {}), output });
    });
  });
}

export const run: Command = {
  name: "run",
  takesCommand: true,
  summary: "run a command, then notify with its exit code, duration and last lines",
  usage: "herald run [--title T] [--tail N] [notify options] -- COMMAND [ARGS…]",
  options: { ...notifyOptions, title: { type: "string" }, tail: { type: "string" } },
  flags: {
    ...notifyFlags,
    title: "the title (default: ✓/✗, the program and its redacted arguments, and the outcome)",
    tail: "N: last lines of output sent as the message (default: 10; 0 sends none)",
  },
  example: "herald run --topic ci -- npm test",
  async run(ctx, { values, rest }) {
    const [cmd, ...args] = rest;
    if (!cmd) throw new CliError("give the command after --: herald run -- make test", exit.usage);
    const tail = wholeFlag(values, "tail", { min: 0, fallback: 10 });
    const started = monotonicMs();
    const { code, endedBy, output } = await runCommand(ctx, cmd, args);
    const seconds = (monotonicMs() - started) / 1000;
    // Redacted before it is cut: a cut could leave half a secret that no pattern recognises.
    const command = redactSecrets([basename(cmd), ...args].join(" "));
    const ok = code === 0;
    const shown = shorten(command, 80);
    const title =
      (values.title as string | undefined) ??
      `${ok ? "✓" : "✗"} ${shown} ${ok ? "succeeded" : `failed (exit ${code}${endedBy ? `, ${endedBy}` : ""})`}`;
    const last = tail > 0 ? redactSecrets(tailLines(output, tail)) : "";
    const input = notifyInput(
      title,
      { ...values, priority: values.priority ?? (ok ? undefined : "high") },
      last,
    );
    input.metadata = {
      ...(input.metadata ?? {}),
      exit_code: code,
      duration_seconds: Math.round(seconds * 1000) / 1000,
      host: hostname(),
      command,
      ...(endedBy ? { signal: endedBy } : {}),
    } as typeof input.metadata;
    try {
      const n = await publish(ctx, input, values["idempotency-key"] as string | undefined);
      if (ctx.flags.json) ctx.io.stdout(`${JSON.stringify(notificationJson(n))}\n`);
    } catch (err) {
      // The command's result matters more than the notification: report, keep its exit code.
      ctx.io.stderr(`herald: could not send the notification: ${(err as Error).message}\n`);
    }
    return code;
  },
};
