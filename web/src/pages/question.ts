/**
 * A question (a notification with actions) in the feed: its answer once there is one, or its
 * actions as buttons (a reply action with a text field) that answer it as this browser's device.
 * The first answer on any device wins; a later one is told who answered first.
 */
import type { Notification } from "../../../gen/herald/v1/notification_pb.ts";
import { api, asDevice, date, errorText } from "../api.ts";
import { notice } from "../app.ts";
import { h, when } from "../dom.ts";
import { loadDevice } from "../idb.ts";

/** What the question came to: the answer, or dismissed. */
function outcome(n: Notification): HTMLElement | null {
  const r = n.response;
  if (r) {
    const label = n.actions.find((a) => a.id === r.actionId)?.label ?? r.actionId;
    return h(
      "p",
      { class: "answer" },
      h("span", { class: "badge sent" }, "answered"),
      ` ${label}`,
      r.text ? h("q", {}, r.text) : null,
      h("span", { class: "muted" }, ` · ${when(date(r.answeredAt))}`),
    );
  }
  if (n.acknowledgedAt) return h("p", {}, h("span", { class: "badge" }, "dismissed"));
  return null;
}

/**
 * Calls the inbox as this browser's device (the console itself is no device: "Notify me in this
 * browser" makes it one), then `done`; what went wrong is shown with `show`.
 */
export async function asThisDevice(
  what: string,
  call: (opts: ReturnType<typeof asDevice>) => Promise<unknown>,
  show: (el: HTMLElement) => void,
  done: () => Promise<void>,
): Promise<void> {
  const device = await loadDevice();
  if (!device) {
    show(notice(`Turn on “Notify me in this browser” to ${what} from here.`, "error"));
    return;
  }
  try {
    await call(asDevice(device.credential));
    await done();
  } catch (err) {
    show(notice(errorText(err), "error"));
  }
}

export function questionPanel(n: Notification, done: () => Promise<void>): HTMLElement | null {
  if (n.actions.length === 0) return null;
  const done_ = outcome(n);
  if (done_) return done_;
  const out = h("div");
  const answer = (actionId: string, text = "") =>
    asThisDevice(
      "answer",
      (opts) => api.inbox.respondToNotification({ id: n.id, actionId, text }, opts),
      (el) => out.replaceChildren(el),
      done,
    );
  const controls = n.actions.map((a) => {
    if (!a.reply) {
      return h(
        "button",
        { type: "button", class: "primary", onclick: () => answer(a.id) },
        a.label,
      );
    }
    const input = h("input", {
      "aria-label": `${a.label}: your reply`,
      placeholder: "Type a reply…",
      maxlength: 1000,
    });
    const form = h("form", { class: "reply" }, input, h("button", { type: "submit" }, a.label));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (input.value.trim()) void answer(a.id, input.value);
    });
    return form;
  });
  return h(
    "div",
    { class: "question", role: "group", "aria-label": `Answer ${n.title}` },
    ...controls,
    out,
  );
}
