/**
 * A `generic` hook's template: Mustache (a logic-less, well-kept template library), rendered
 * with the sender's JSON body as the view and without HTML escaping (a notification is text).
 * The view is a copy of the body without prototypes, so a template reaches nothing but the data
 * it was sent: `{{constructor}}` or `{{__proto__}}` find nothing (unless the body has them). An
 * object or a list named as a value renders as its JSON. Partials are not offered.
 */
import Mustache from "mustache";

export const templateFields = ["title", "message", "priority", "topic", "click_url"] as const;
export type TemplateField = (typeof templateFields)[number];
export type HookTemplateText = Record<TemplateField, string>;

type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** Whether a template's tokens, sections included, use a partial. */
const usesPartial = (tokens: Token[]): boolean =>
  tokens.some(
    ([type, , , , children]) => type === ">" || (children ? usesPartial(children) : false),
  );

/** Why the template cannot be used, or undefined. */
export function templateProblem(template: string): string | undefined {
  let tokens: Token[];
  try {
    tokens = new Mustache.Writer().parse(template) as Token[];
  } catch (err) {
    return `is not a valid Mustache template: ${(err as Error).message}`;
  }
  return usesPartial(tokens) ? "may not use partials ({{> …}})" : undefined;
}

/** A JSON value as a view: the same data in objects and lists without prototypes. */
export function templateView(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return Object.setPrototypeOf(value.map(templateView), null);
  const bare: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value)) bare[k] = templateView(v);
  return bare;
}

/** A value as the notification's text: an object or a list as its JSON. */
const asText = (v: unknown) =>
  typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);

/**
 * The template rendered with a view (templateView), trimmed. A fresh writer each time: no
 * cache of templates grows with the senders.
 */
export function renderTemplate(template: string, view: unknown): string {
  return new Mustache.Writer().render(template, view, undefined, { escape: asText }).trim();
}
