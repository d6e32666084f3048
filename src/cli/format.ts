/** How the CLI shows things and reads its positionals: timestamps, aligned tables, usage errors. */

import { type DescMessage, type JsonObject, type MessageShape, toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CliError, type Context, exit } from "./context.ts";

/** A timestamp to the second, in UTC, or an em dash when there is none. */
export const when = (t?: Timestamp) =>
  t
    ? timestampDate(t)
        .toISOString()
        .replace(/\.\d+Z$/, "Z")
    : "—";

/** Rows as left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The positionals, when there are at least `n`; otherwise a usage error. */
export function need(positionals: string[], n: number, usage: string): string[] {
  if (positionals.length < n) throw new CliError(`usage: ${usage}`, exit.usage);
  return positionals;
}

/**
 * A flag that takes a whole number from `min` (to `max`): its value, `fallback` when it is not
 * given, or a usage error naming it. Before, `listen --count abc` listened for ever (NaN), and
 * `--count 0` stopped at once, saying "(0 notification)".
 */
export function wholeFlag(
  values: Record<string, unknown>,
  flag: string,
  { min, max, fallback }: { min: number; max?: number; fallback: number },
): number {
  const raw = values[flag];
  if (raw === undefined) return fallback;
  const n = typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (n >= min && n <= (max ?? Number.MAX_SAFE_INTEGER)) return n;
  const range = max === undefined ? `${min} or more` : `${min} to ${max}`;
  throw new CliError(
    `--${flag} takes a whole number, ${range}; got ${JSON.stringify(raw)}`,
    exit.usage,
  );
}

/**
 * A resource as `--json` prints it: every field of its message (snake_case, timestamps as RFC
 * 3339, defaults included), so scripts find `created_at`, deliveries and the rest.
 */
export function resourceJson<D extends DescMessage>(
  schema: D,
  message: MessageShape<D>,
): JsonObject {
  return toJson(schema, message, {
    useProtoFieldName: true,
    alwaysEmitImplicit: true,
  }) as JsonObject;
}

/** Matches the uuid prefixes people type (as git and gh accept): `01a2f3` for `01a2f3…`. */
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The full id of `typed`: itself when complete, else the one candidate that starts with it.
 * None or several is an error that names them.
 */
export async function resolveId(
  typed: string,
  what: string,
  candidates: () => Promise<{ id: string; label: string }[]>,
): Promise<string> {
  if (uuid.test(typed)) return typed;
  if (!/^[0-9a-f-]{4,}$/.test(typed)) {
    throw new CliError(
      `${JSON.stringify(typed)} is not ${/^[AEIOU]/i.test(what) ? "an" : "a"} ${what} id (give at least 4 of its first characters)`,
      exit.usage,
    );
  }
  const matches = (await candidates()).filter((c) => c.id.startsWith(typed));
  if (matches.length === 1) return (matches[0] as { id: string }).id;
  if (matches.length === 0) throw new CliError(`no ${what} id starts with ${typed}`, exit.failed);
  throw new CliError(
    `${typed} is ambiguous: ${matches.map((m) => `${m.id} (${m.label})`).join(", ")}`,
    exit.usage,
  );
}

/**
 * The shortest prefix of each id, at least `min` long, that no other of `ids` starts with: what a
 * list shows, and what `resolveId` takes back (as git abbreviates commits).
 */
export function shortIds(ids: readonly string[], min = 8): Map<string, string> {
  const short = new Map<string, string>();
  for (const id of ids) {
    let n = min;
    while (n < id.length && ids.some((o) => o !== id && o.startsWith(id.slice(0, n)))) n++;
    short.set(id, id.slice(0, n));
  }
  return short;
}

/** Asks before something that cannot be undone; `--yes` answers for scripts. */
export async function confirm(ctx: Context, question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!ctx.io.isTty || !ctx.io.prompt) {
    throw new CliError(`${question}: add --yes to confirm`, exit.usage);
  }
  const answer = (await ctx.io.prompt(`${question}? [y/N] `, false)).trim().toLowerCase();
  if (answer !== "y" && answer !== "yes") throw new CliError("nothing done", exit.canceled);
}

/**
 * `--expires`: a duration from now (`90d`, `12h`, `30m`, `2w`) or a date or instant
 * (`2027-01-31`, RFC 3339), as a timestamp; a usage error otherwise.
 */
export function expiryOf(value: unknown, now = Date.now()): Timestamp | undefined {
  if (value === undefined) return undefined;
  const text = String(value).trim();
  const units: Record<string, number> = { m: 60, h: 3600, d: 86_400, w: 604_800 };
  const duration = /^(\d+)([mhdw])$/.exec(text);
  const at = duration
    ? now + Number(duration[1]) * (units[duration[2] as string] as number) * 1000
    : /^\d{4}-\d{2}-\d{2}/.test(text)
      ? Date.parse(text)
      : Number.NaN;
  if (!Number.isFinite(at) || at <= now) {
    throw new CliError(
      `--expires ${JSON.stringify(text)}: give a duration (90d, 12h, 2w) or a future date (2027-01-31)`,
      exit.usage,
    );
  }
  return timestampFromDate(new Date(at));
}

/**
 * A line about the connection that changes in place on a terminal (each new state replaces the
 * last; `done` ends the line), and a line each elsewhere.
 */
export function statusLine(ctx: Context) {
  return (text: string, done: boolean) =>
    ctx.io.stderr(ctx.io.isTty ? `\r\x1b[K${text}${done ? "\n" : ""}` : `${text}\n`);
}

/** What a command that waits on the server says when a call failed and will be made again. */
export const retryingLine = (why: string, retryInMs: number) =>
  `connection lost (${why}), retrying in ${Math.round(retryInMs / 100) / 10} s`;
