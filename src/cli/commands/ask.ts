/**
 * `herald ask QUESTION --action yes:Deploy --action no:Cancel`: asks the person, on their
 * devices, and waits. Prints the chosen action's id (or the typed reply) and exits 0; exits 5
 * when the person says no (a `--deny` action, or dismissed it) and 124 when nobody answered in
 * time, so a script or CI job can gate on a human.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Answer, type AskInput, answerFields, type Herald } from "../../sdk/index.ts";
import type { Command, Parsed } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { retryingLine, statusLine } from "../format.ts";
import { heraldOf, notifyInput, parseDuration } from "./notify.ts";

/** One `--action ID:LABEL` (or `--reply ID:LABEL`). */
function actionOf(spec: string, reply: boolean) {
  const colon = spec.indexOf(":");
  const flag = reply ? "--reply" : "--action";
  if (colon < 1 || colon === spec.length - 1) {
    throw new CliError(
      `${flag} takes ID:LABEL (yes:Deploy), got ${JSON.stringify(spec)}`,
      exit.usage,
    );
  }
  return { id: spec.slice(0, colon), label: spec.slice(colon + 1), reply };
}

function actionsOf(values: Parsed["values"]) {
  const list = (v: unknown) => (v as string[] | undefined) ?? [];
  const actions = [
    ...list(values.action).map((a) => actionOf(a, false)),
    ...list(values.reply).map((a) => actionOf(a, true)),
  ];
  if (actions.length === 0) {
    throw new CliError("give at least one --action ID:LABEL (or --reply ID:LABEL)", exit.usage);
  }
  if (actions.length > 3) throw new CliError("at most 3 actions in all", exit.usage);
  const deny = list(values.deny);
  for (const d of deny) {
    if (!actions.some((a) => a.id === d)) {
      throw new CliError(`--deny ${d} names no action`, exit.usage);
    }
  }
  return { actions, deny };
}

function timeoutOf(values: Parsed["values"]): number {
  if (values.timeout === undefined) return 10 * 60;
  const seconds = parseDuration(values.timeout as string);
  if (seconds === undefined || seconds < 1 || seconds > 86_400) {
    throw new CliError("--timeout takes a duration of 1s..24h, like 90s, 10m or 1h", exit.usage);
  }
  return seconds;
}

function report(ctx: Context, a: Answer, denied: boolean): number {
  const n = a.notification;
  const json = { id: n.id, ...answerFields(a), denied };
  if (a.outcome === "answered") {
    ctx.out(a.text || (a.actionId as string), json);
    return denied ? exit.denied : exit.ok;
  }
  if (ctx.flags.json) ctx.out("", json);
  else if (a.outcome === "dismissed") ctx.io.stderr("dismissed without an answer\n");
  else ctx.io.stderr(`no answer (${a.outcome === "timeout" ? "timed out" : a.outcome})\n`);
  return a.outcome === "dismissed" ? exit.denied : exit.timedOut;
}

export const ask: Command = {
  name: "ask",
  summary: "ask on your devices and wait for the answer (exit 0 answered, 5 denied, 124 no answer)",
  usage:
    "herald ask QUESTION --action ID:LABEL [--action …] [--reply ID:LABEL] [--deny ID] [--timeout 10m] [-m MESSAGE] [--topic T] [--priority P]",
  options: {
    action: { type: "string", multiple: true },
    reply: { type: "string", multiple: true },
    deny: { type: "string", multiple: true },
    timeout: { type: "string" },
    message: { type: "string", short: "m" },
    topic: { type: "string", short: "t" },
    priority: { type: "string", short: "p" },
    "click-url": { type: "string" },
  },
  flags: {
    topic: "T: the question's topic (default `default`)",
    priority: "P: low, normal or high (default normal)",
    "click-url": "URL: a link the phone opens with the question",
    action: "ID:LABEL: a button (at most 3 actions in all); its id is printed when chosen",
    reply: "ID:LABEL: a button that asks for text; the text is printed when chosen",
    deny: "ID: choosing this action exits 5 (denied) instead of 0; repeat for more",
    timeout:
      "DURATION: how long to wait, 1s..24h (default 10m); then the question is withdrawn from every device",
    message: "-m TEXT: more detail under the question",
  },
  example:
    'herald ask "Deploy api v42 to production?" --action yes:Deploy --action no:Cancel --deny no',
  async run(ctx, { values, positionals }) {
    const question = positionals.join(" ");
    if (!question) throw new CliError('a question is required: herald ask "Deploy?" …', exit.usage);
    const { actions, deny } = actionsOf(values);
    const timeout = timeoutOf(values);
    // notifyInput builds a plain init object (never a Message), so the actions go in as plain too.
    const input = { ...notifyInput(question, values), actions } as AskInput;
    const herald: Herald = heraldOf(ctx);
    let [asked, expires, lost, withdrawn, status] = ["", "", false, false, statusLine(ctx)];
    // The server restarting or a connection cut while it waits: said, and the wait goes on.
    const reconnected = () => {
      if (lost) status("reconnected", true);
      lost = false;
    };
    const answer = await herald
      .ask(input, {
        timeoutMs: timeout * 1000,
        ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
        onProgress: (n, waited) => {
          reconnected();
          if (waited > 0) return;
          asked = n.id;
          expires = n.expiresAt ? timestampDate(n.expiresAt).toLocaleTimeString() : "";
          if (!ctx.flags.json) {
            ctx.io.stderr(
              `asked (${n.id}); waiting up to ${values.timeout ?? "10m"} for an answer…\n`,
            );
          }
        },
        onWithdraw: (done) => {
          withdrawn = done;
        },
        onRetry: (e, ms) => {
          status(retryingLine(e.message, ms), false);
          lost = true;
        },
      })
      .catch((err: unknown) => {
        if (lost && ctx.io.isTty) ctx.io.stderr("\n"); // what ends it goes on a line of its own
        if (!ctx.io.signal?.aborted) throw err;
        const still = !asked
          ? ""
          : withdrawn
            ? `; the question (${asked}) was withdrawn`
            : `; the question (${asked}) could not be withdrawn (the server did not answer)${expires && `: it expires at ${expires}`}`;
        throw new CliError(`stopped waiting${still}`, exit.canceled);
      });
    reconnected();
    return report(ctx, answer, answer.actionId !== undefined && deny.includes(answer.actionId));
  },
};
