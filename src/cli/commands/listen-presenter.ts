/**
 * What `herald listen` shows, and the keys it takes on a terminal: a notification printed (or as
 * NDJSON, or run through `--exec`); one awaiting acknowledgement is acknowledged with `a`; a
 * question (a notification with actions) is answered with its number, a reply action's text
 * typed after it and sent with Enter (Escape gives up).
 */
import { spawn } from "node:child_process";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Replaced, SubscribeResponse } from "../../../gen/herald/v1/inbox_service_pb.ts";
import { type Notification, NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import { HeraldError } from "../../sdk/errors.ts";
import { CliError, type Context, exit } from "../context.ts";
import { runExec } from "./listen-exec.ts";
import { parseDuration } from "./notify.ts";

/**
 * How a notification reads in a terminal: time, priority (high stands out), topic and title on
 * one line; the message indented below; then the link.
 */
export function formatNotification(n: Notification, color: boolean): string {
  const time = (n.createdAt ? timestampDate(n.createdAt) : new Date()).toTimeString().slice(0, 8);
  const high = n.priority === "high";
  const mark = high
    ? color
      ? "\x1b[1;31mHIGH\x1b[0m"
      : "HIGH"
    : n.priority === "low"
      ? "low "
      : "    ";
  const title = high && color ? `\x1b[1m${n.title}\x1b[0m` : n.title;
  const pad = " ".repeat(10);
  const lines = [`${time}  ${mark}  #${n.topic}  ${title}`];
  for (const line of n.message ? n.message.split("\n") : []) lines.push(`${pad}${line}`);
  if (n.clickUrl) lines.push(`${pad}→ ${n.clickUrl}`);
  return `${lines.join("\n")}\n`;
}

/** A desktop notification where the system has a way to show one (notify-send, osascript). */
function desktopNotify(n: Notification, env: Record<string, string | undefined>): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? [
          "osascript",
          [
            "-e",
            `display notification ${JSON.stringify(n.message)} with title ${JSON.stringify(n.title)}`,
          ],
        ]
      : ["notify-send", [...(n.priority === "high" ? ["-u", "critical"] : []), n.title, n.message]];
  const child = spawn(cmd, args as string[], { stdio: "ignore", env: env as NodeJS.ProcessEnv });
  child.on("error", () => {}); // not installed: the terminal line is enough
}

interface PresenterState {
  /** The last notification that waits for the person (acknowledgement or an answer). */
  waiting: Notification | undefined;
  /** Questions answered with this terminal's keys, whose clear needs no second line. */
  answeredHere: Set<string>;
  /** The last notification printed on a terminal, and how many lines it took. */
  last?: { id: string; lines: number } | undefined;
  /** The notification the next one replaces (a `replaced` event came first). */
  replacing?: string | undefined;
}

/** What the presenter does for the person: acknowledge, or answer, as this device. */
export interface PersonActs {
  acknowledge: (id: string) => Promise<unknown>;
  respond: (id: string, actionId: string, text: string) => Promise<unknown>;
}

/** The line under a question: its actions, each with its key. */
export function actionsLine(n: Notification): string {
  const keys = n.actions.map((a, i) => `${i + 1} ${a.label}${a.reply ? "…" : ""}`);
  return `  answer: ${keys.join("  ·  ")}\n`;
}

/**
 * Keys on a terminal: a question waiting takes its action numbers (a reply action then takes a
 * line of text), one awaiting acknowledgement takes `a`.
 */
function keyHandler(ctx: Context, acts: PersonActs, state: PresenterState) {
  let typing: { n: Notification; actionId: string; text: string } | undefined;
  const failed = (what: string) => (err: unknown) => {
    ctx.io.stderr(`${what} failed: ${HeraldError.from(err).message}\n`);
  };
  const answer = (n: Notification, actionId: string, text: string) => {
    state.waiting = undefined;
    state.answeredHere.add(n.id);
    const label = n.actions.find((a) => a.id === actionId)?.label ?? actionId;
    acts
      .respond(n.id, actionId, text)
      .then(() => ctx.io.stdout(`  ✓ answered: ${label}${text ? ` (${text})` : ""}\n`))
      .catch(failed("answering"));
  };
  return (key: string) => {
    if (typing) {
      if (key === "\r" || key === "\n") {
        ctx.io.stdout("\n");
        const t = typing;
        typing = undefined;
        if (t.text.trim()) answer(t.n, t.actionId, t.text);
      } else if (key === "\x1b") {
        typing = undefined;
        ctx.io.stdout("  (not sent)\n");
      } else if (key === "\x7f" || key === "\b") {
        if (typing.text) ctx.io.stdout("\b \b");
        typing.text = [...typing.text].slice(0, -1).join("");
      } else if (key >= " ") {
        typing.text += key;
        ctx.io.stdout(key);
      }
      return;
    }
    const n = state.waiting;
    if (!n) return;
    if (n.actions.length > 0) {
      const action = n.actions[Number(key) - 1];
      if (!/^[1-3]$/.test(key) || !action) return;
      if (!action.reply) return answer(n, action.id, "");
      typing = { n, actionId: action.id, text: "" };
      ctx.io.stdout(`  ${action.label}: `);
    } else if (key === "a") {
      state.waiting = undefined;
      acts.acknowledge(n.id).catch(failed("acknowledging"));
    }
  };
}

/** `--exec-timeout`: how long a command may run (1s..24h), in ms; undefined: no limit. */
export function execTimeoutOf(values: Record<string, unknown>): number | undefined {
  const text = values["exec-timeout"];
  if (text === undefined) return undefined;
  const seconds = parseDuration(String(text));
  if (values.exec === undefined || seconds === undefined || seconds < 1 || seconds > 86_400) {
    throw new CliError(
      "--exec-timeout takes a duration of 1s..24h, like 30s or 5m, with --exec",
      exit.usage,
    );
  }
  return seconds * 1000;
}

/**
 * How `listen` shows what arrives: printed, as NDJSON, or run through `--exec`; keys act on what
 * waits for the person (a terminal only), and a clear (acknowledged or answered, here or
 * elsewhere) is said.
 */
export function presenter(
  ctx: Context,
  values: Record<string, unknown>,
  deviceId: string,
  acts: PersonActs,
) {
  const exec = typeof values.exec === "string" ? values.exec : undefined;
  const execTimeoutMs = execTimeoutOf(values);
  const state: PresenterState = { waiting: undefined, answeredHere: new Set() };
  const stopKeys =
    exec === undefined && !ctx.flags.json
      ? ctx.io.onKey?.(keyHandler(ctx, acts, state))
      : undefined;
  return {
    /** `quiet`: it came in the device's quiet hours: no bell, no desktop notification. */
    /** Shows `n`; false when the output did not take it (closed, or stopped before it could). */
    async notification(n: Notification, quiet = false): Promise<boolean> {
      const fields = toJson(NotificationSchema, n, { useProtoFieldName: true }) as object;
      const json = JSON.stringify(quiet ? { ...fields, quiet } : fields);
      if (exec !== undefined) {
        const end = await runExec(exec, json, ctx.io.env, ctx.io.signal, execTimeoutMs);
        // A hook that fails is said, not passed over; the next notification still runs it.
        const which = `for ${n.id} (${JSON.stringify(n.title)})`;
        if (end.timedOut) {
          ctx.io.stderr(
            `herald: --exec still running after ${values["exec-timeout"]} ${which}: stopped\n`,
          );
        } else if (end.code !== 0 && !ctx.io.signal?.aborted) {
          ctx.io.stderr(`herald: --exec exited with ${end.code} ${which}\n`);
        }
      } else if (ctx.flags.json)
        ctx.io.stdout(`${json}\n`); // NDJSON: one object per line
      else ctx.io.stdout(`${values.bell && !quiet ? "\x07" : ""}${inPlaceOf(n, quiet)}`);
      // Confirmed once handed on: a pipe's reader that is behind holds the next ones back.
      if (exec === undefined && (await ctx.io.drained?.()) === false) return false;
      if (values.desktop && !quiet) desktopNotify(n, ctx.io.env);
      const open = !n.acknowledgedAt && !n.response;
      if (open && n.actions.length > 0) {
        state.waiting = n;
        if (stopKeys) ctx.io.stdout(actionsLine(n));
      } else if (open && n.requireAck) {
        state.waiting = n;
        if (stopKeys) ctx.io.stdout("  needs acknowledgement: press a\n");
      }
      return true;
    },
    cleared({ id, byDeviceId }: { id: string; byDeviceId: string }) {
      if (id === state.waiting?.id) state.waiting = undefined;
      if (ctx.flags.json) {
        ctx.io.stdout(`${JSON.stringify({ cleared: { id, by_device_id: byDeviceId } })}\n`);
      } else if (exec === undefined && !state.answeredHere.delete(id)) {
        // (An answer given here was said already, with what was chosen.)
        if (!byDeviceId) ctx.io.stdout(`  ✗ withdrawn: its asker stopped waiting: ${id}\n`);
        else {
          const where = byDeviceId === deviceId ? "here" : `on device ${byDeviceId}`;
          ctx.io.stdout(`  ✓ acknowledged ${where}: ${id}\n`);
        }
      }
    },
    /** What else a stream says: a clear, a replacement (keepalives say nothing). */
    aside(event: SubscribeResponse["event"]) {
      if (event.case === "cleared") this.cleared(event.value);
      if (event.case === "replaced") this.replaced(event.value);
    },
    replaced({ id, replacedById, replaceKey }: Replaced) {
      state.replacing = id;
      if (ctx.flags.json) {
        const replaced = { id, replaced_by_id: replacedById, replace_key: replaceKey };
        ctx.io.stdout(`${JSON.stringify({ replaced })}\n`);
      }
    },
    stop: () => stopKeys?.(),
  };

  /**
   * A notification as printed: on a terminal, one that replaces the last one printed takes its
   * place (the cursor goes back over it); one that replaces an earlier one says so.
   */
  function inPlaceOf(n: Notification, quiet: boolean): string {
    const text = `${formatNotification(n, ctx.io.isTty)}${quiet ? "  (quiet hours)\n" : ""}`;
    const replacing = state.replacing;
    state.replacing = undefined;
    const back =
      ctx.io.isTty && replacing !== undefined && state.last?.id === replacing
        ? `\x1b[${state.last.lines}A\x1b[0J`
        : "";
    const marked = replacing !== undefined && !back ? `  ↻ replaces ${replacing}\n` : "";
    state.last = { id: n.id, lines: (text.match(/\n/g) ?? []).length };
    return `${back}${text}${marked}`;
  }
}
