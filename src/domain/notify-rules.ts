/**
 * The publish rules that protovalidate cannot express in the proto. They run in the validation
 * interceptor right after the proto's rules, so every surface applies them and a client hears
 * about every bad field at once.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import type { FieldViolation } from "../errors.ts";
import { type AckInput, ackViolations } from "./acknowledgement.ts";
import { actionViolations } from "./actions.ts";
import { refusePublicUrl } from "./public-url.ts";
import { type ScheduleInput, scheduleViolations } from "./schedule.ts";

export const limits = {
  metadataBytes: 2048,
  idempotencyKeyMaxLength: 255,
} as const;

/** The subset of a publish request these rules read. */
export interface NotifyInput extends ScheduleInput, AckInput {
  title: string;
  clickUrl?: string | undefined;
  metadata?: JsonObject | undefined;
  actions?: readonly { label: string }[];
}

/** Compact UTF-8 JSON, the form whose size the metadata limit counts. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value);
}

export function notifyViolations(req: NotifyInput, now = new Date()): FieldViolation[] {
  const out: FieldViolation[] = [
    ...scheduleViolations(req, now),
    ...ackViolations(req),
    ...actionViolations(req.actions ?? []),
  ];
  if (req.title.length > 0 && req.title.trim() === "") {
    out.push({ field: "title", message: "must not be blank" });
  }
  if (req.clickUrl !== undefined) {
    const why = refusePublicUrl(req.clickUrl);
    if (why) out.push({ field: "click_url", message: why });
  }
  if (req.metadata !== undefined) {
    const bytes = Buffer.byteLength(compactJson(req.metadata), "utf8");
    if (bytes > limits.metadataBytes) {
      out.push({
        field: "metadata",
        message: `must be at most ${limits.metadataBytes} bytes of compact JSON, got ${bytes}`,
      });
    }
  }
  return out;
}

const idempotencyKeyPattern = /^[\x20-\x7e]{1,255}$/;

/** What a person who wrote an unknown priority most likely meant. */
const prioritySynonyms: Record<string, string> = {
  urgent: "high",
  critical: "high",
  emergency: "high",
  important: "high",
  max: "high",
  medium: "normal",
  default: "normal",
  info: "normal",
  min: "low",
  minor: "low",
  quiet: "low",
};

/** Words for the characters of a pattern's class (`a-z0-9_-`), as a person says them. */
function charactersOf(set: string): string {
  const words: string[] = [];
  let rest = set;
  for (const [range, word] of [
    ["A-Za-z", "a letter"],
    ["a-z", "a lowercase letter"],
    ["0-9", "a digit"],
  ] as const) {
    if (rest.includes(range)) {
      words.push(word);
      rest = rest.replace(range, "");
    }
  }
  words.push(...[...rest.replace(/\\/g, "")].map((c) => `"${c}"`));
  return `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

/** The proto's patterns that are not of one character class, in words. */
const patternWords: Record<string, string> = {
  "^([01][0-9]|2[0-3]):[0-5][0-9]$": "must be a time of day as HH:MM, from 00:00 to 23:59",
  "^([a-z0-9][a-z0-9_-]{0,62}/)?([a-z0-9_-]{1,64}|\\*)$":
    'must be a topic ("deploys"), a project\'s topic ("ci/deploys"), or * for every topic ("ci/*" for a project\'s)',
  "^$|^[0-9a-f-]{36}$": "must be a notification's id (36 characters), or empty",
};

/**
 * A pattern of one character class (`^[a-z0-9_-]{1,64}$`: topics, keys, action ids), perhaps
 * after a first character of its own (`^[a-z0-9][a-z0-9_-]{0,62}$`: project names), in words,
 * with the value lowercased as a suggestion where that fits; the others by `patternWords` (a
 * unit test holds every pattern in proto/ to having words).
 */
export function explainPattern(message: string, given: unknown): string {
  const pattern = /`(.*)`/.exec(message)?.[1];
  if (pattern === undefined) return message;
  const said = patternWords[pattern] ?? classInWords(pattern);
  if (said === undefined) return message;
  if (typeof given !== "string") return said;
  const lower = given.toLowerCase();
  const fits = new RegExp(pattern, "u").test(lower);
  return fits && lower !== given ? `${said} (for "${given}", use "${lower}")` : said;
}

/** `^[a-z0-9_-]{1,64}$` (or with a first character of its own) in words; undefined if not so. */
function classInWords(pattern: string): string | undefined {
  const m = /^\^(?:\[([^\]]+)\])?\[([^\]]+)\]\{(\d+),(\d+)\}\$$/.exec(pattern);
  if (!m) return undefined;
  const [, first, set, min, max] = m as unknown as [
    string,
    string | undefined,
    string,
    string,
    string,
  ];
  const [low, high] = [Number(min), Number(max)].map((n) => n + (first ? 1 : 0)) as [
    number,
    number,
  ];
  const length = low === 0 ? `at most ${high}` : `${low} to ${high}`;
  const starting = first ? `, the first ${charactersOf(first)}` : "";
  return `must be ${length} characters, each ${charactersOf(set)}${starting}`;
}

/** The value a violation's path (`topic`, `topics[0]`, `actions[1].id`) names in the request. */
function valueAt(request: unknown, path: string): unknown {
  let at = request;
  for (const step of path.split(/[.[\]]+/).filter(Boolean)) {
    const key = /^\d+$/.test(step)
      ? Number(step)
      : step.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    at =
      at === null || typeof at !== "object"
        ? undefined
        : (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/**
 * A clearer message for a proto rule's violation: a list rule names its values (protovalidate
 * says `must be in list [, low, normal, high]`), and an unknown priority gets a suggestion; a
 * pattern of a character class is said in words.
 */
export function explainViolation(
  field: string,
  ruleId: string,
  message: string,
  request: unknown,
): string {
  const given = valueAt(request, field);
  if (ruleId === "string.pattern") return explainPattern(message, given);
  if (ruleId !== "string.in") return message;
  const values =
    /\[(.*)\]/
      .exec(message)?.[1]
      ?.split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "") ?? [];
  if (values.length === 0) return message;
  const suggestion =
    field === "priority" && typeof given === "string"
      ? prioritySynonyms[given.toLowerCase()]
      : undefined;
  return `must be one of ${values.join(", ")}${suggestion ? ` (for "${given}", use ${suggestion})` : ""}`;
}

/** Extra checks for one RPC: the decoded request and its headers in, violations out. */
export type DomainRule = (message: unknown, header: Headers) => FieldViolation[];

/** The rules protovalidate cannot express, by RPC, for the validation step of every surface. */
export const domainRules: Record<string, DomainRule> = {
  "herald.v1.NotifyService/Notify": (message, header) => {
    const out = notifyViolations(message as NotifyInput);
    const key = header.get("idempotency-key");
    if (key !== null) {
      const v = idempotencyKeyViolation(key);
      if (v) out.push(v);
    }
    return out;
  },
};

/** Idempotency-Key: 1..255 printable ASCII characters. */
export function idempotencyKeyViolation(key: string): FieldViolation | undefined {
  if (idempotencyKeyPattern.test(key)) return undefined;
  return {
    field: "Idempotency-Key",
    message: `must be 1..${limits.idempotencyKeyMaxLength} printable ASCII characters`,
  };
}
