/**
 * Any JSON sender, through a template (template.ts): title, message, priority, topic and
 * `click_url` rendered from the body. Without a template (or for an empty field of one), the
 * body's own member of that name is taken. The priority may also be ntfy's 1-5. A sender that
 * retries may send `Idempotency-Key`: its retries then send once.
 */
import { clip, type HookCall, type HookOutcome, HookPayloadError, type Priority } from "./event.ts";
import {
  type HookTemplateText,
  renderTemplate,
  type TemplateField,
  templateView,
} from "./template.ts";

const priorities: Record<string, Priority> = {
  "": "normal",
  low: "low",
  normal: "normal",
  high: "high",
  min: "low",
  max: "high",
  urgent: "high",
  default: "normal",
  "1": "low",
  "2": "low",
  "3": "normal",
  "4": "high",
  "5": "high",
};

const topicPattern = /^[a-z0-9_-]{0,64}$/;

export function readGeneric(call: HookCall, template: HookTemplateText | null): HookOutcome {
  const own = (field: TemplateField) => `{{{${field}}}}`;
  const view = templateView(call.body);
  const render = (field: TemplateField) => renderTemplate(template?.[field] || own(field), view);
  const title = render("title");
  if (!title) {
    throw new HookPayloadError(
      "title",
      template?.title ? "the template rendered an empty title" : "is missing or empty",
    );
  }
  const said = render("priority");
  const priority = priorities[said.toLowerCase()];
  if (!priority) {
    throw new HookPayloadError("priority", `is "${said}": must be low, normal, high or 1-5`);
  }
  const topic = render("topic");
  if (!topicPattern.test(topic)) {
    throw new HookPayloadError(
      "topic",
      `is "${topic}": lowercase letters, digits, - and _, at most 64`,
    );
  }
  const clickUrl = render("click_url");
  if (clickUrl && !/^https?:\/\/\S+$/i.test(clickUrl)) {
    throw new HookPayloadError("click_url", `is "${clickUrl}": must be an http or https URL`);
  }
  return {
    publish: {
      title: clip(title, "title"),
      message: clip(render("message"), "message"),
      priority,
      ...(topic && { topic }),
      ...(clickUrl && { clickUrl }),
      dedupe: call.idempotencyKey,
    },
  };
}
