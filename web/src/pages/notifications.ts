/**
 * Notifications of the project in use: send one, filter by topic, a live feed (a stream,
 * NotifyService.WatchNotifications: the newest page again whenever it changes), and each one's
 * status and per-device delivery states, with its metadata as JSON.
 */
import type { Notification } from "../../../gen/herald/v1/notification_pb.ts";
import type { WatchNotificationsResponse } from "../../../gen/herald/v1/notify_service_pb.ts";
import { api, date, errorText, inProject } from "../api.ts";
import { notice, onSubmit, route, state } from "../app.ts";
import { field, fill, h, when } from "../dom.ts";
import { whileHeard } from "../live.ts";
import { inPlace } from "../replaced.ts";
import { holdingFeed } from "./feed-hold.ts";
import { firstPublish } from "./first-publish.ts";
import { asThisDevice, questionPanel } from "./question.ts";

function badge(text: string, kind = text): HTMLElement {
  return h("span", { class: `badge ${kind}` }, text.replaceAll("_", " "));
}

/** A priority at a glance, as ntfy shows it: an arrow up for high, down for low. */
function priorityIcon(priority: string): HTMLElement | null {
  if (priority !== "high" && priority !== "low") return null;
  return h(
    "span",
    {
      class: `priority ${priority}`,
      role: "img",
      "aria-label": `${priority} priority`,
      title: `${priority} priority`,
    },
    priority === "high" ? "▲" : "▼",
  );
}

function details(n: Notification): HTMLElement {
  const rows = n.deviceDeliveries.map((d) =>
    h(
      "tr",
      {},
      h("td", {}, d.deviceName, h("div", { class: "muted" }, d.platform)),
      h("td", {}, badge(d.state)),
      h("td", {}, String(d.attempts)),
      h("td", {}, when(date(d.updatedAt))),
      h("td", { class: "muted" }, d.lastError || "—"),
    ),
  );
  return h(
    "div",
    {},
    n.message.length > 160 || n.message.includes("\n")
      ? h("p", { class: "message" }, n.message)
      : null,
    n.clickUrl
      ? h(
          "p",
          {},
          "Opens ",
          h("a", { href: n.clickUrl, rel: "noreferrer noopener", target: "_blank" }, n.clickUrl),
        )
      : null,
    n.metadata
      ? h(
          "div",
          {},
          h("div", { class: "muted" }, "Metadata"),
          h("pre", {}, JSON.stringify(n.metadata, null, 2)),
        )
      : null,
    rows.length > 0
      ? h(
          "table",
          { "aria-label": "Deliveries" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Device", "State", "Attempts", "Updated", "Last error"].map((t) =>
                h("th", {}, t),
              ),
            ),
          ),
          h("tbody", {}, rows),
        )
      : h("p", { class: "muted" }, "No device received it."),
  );
}

/**
 * Acknowledges a notification that asks for it, as this browser's device (the console itself
 * is no device: "Notify me in this browser" makes it one).
 */
function acknowledgeButton(n: Notification, done: () => Promise<void>): HTMLElement | null {
  if (!n.requireAck || n.acknowledgedAt || n.actions.length > 0) return null; // answering acknowledges
  const button = h(
    "button",
    {
      type: "button",
      class: "primary",
      "aria-label": `Acknowledge ${n.title}`,
      onclick: () =>
        asThisDevice(
          "acknowledge",
          (opts) => api.inbox.ackNotification({ id: n.id, acknowledge: true }, opts),
          (el) => button.replaceWith(el),
          done,
        ),
    },
    "Acknowledge",
  );
  return button;
}

/** Shows and hides a notification's details in `more`, fetching them when opened. */
function detailsToggle(n: Notification, more: HTMLElement): HTMLElement {
  const toggle: HTMLElement = h(
    "button",
    {
      type: "button",
      "aria-expanded": "false",
      "aria-label": `Details of ${n.title}`,
      onclick: async () => {
        const open = more.hidden;
        more.hidden = !open;
        toggle.setAttribute("aria-expanded", String(open));
        if (open) {
          try {
            const full = await api.notify.getNotification({ id: n.id }, inProject(state.projectId));
            fill(more, details(full.notification ?? n));
          } catch (err) {
            fill(more, notice(errorText(err), "error"));
          }
        }
      },
    },
    "Details",
  );
  return toggle;
}

function item(n: Notification, fresh: boolean, refresh: () => Promise<void>): HTMLLIElement {
  const more = h("div", { hidden: true });
  const toggle = detailsToggle(n, more);
  return h(
    "li",
    { class: fresh ? "fresh" : "", "data-id": n.id },
    h(
      "div",
      { class: "head" },
      priorityIcon(n.priority),
      badge(n.status),
      n.priority === "high" ? badge("high") : null,
      n.requireAck
        ? badge(
            n.acknowledgedAt ? "acknowledged" : "awaits acknowledgement",
            n.acknowledgedAt ? "sent" : "high",
          )
        : null,
      n.clickUrl
        ? h(
            "a",
            { class: "title", href: n.clickUrl, rel: "noreferrer noopener", target: "_blank" },
            n.title,
          )
        : h("span", { class: "title" }, n.title),
      h("span", { class: "muted" }, `#${n.topic} · ${when(date(n.createdAt))}`),
      acknowledgeButton(n, refresh),
      toggle,
    ),
    n.message
      ? h(
          "div",
          { class: "muted" },
          n.message.length > 160 ? `${n.message.slice(0, 160)}…` : n.message,
        )
      : null,
    questionPanel(n, refresh),
    more,
  );
}

function sendForm(refresh: () => Promise<void>): HTMLElement {
  const title = field("Title", { required: true, maxlength: 250 });
  const message = field("Message", { maxlength: 4096 });
  const topic = field("Topic", { placeholder: "default" });
  const priority = h(
    "select",
    {},
    ...["normal", "high", "low"].map((p) => h("option", { value: p }, p)),
  );
  const out = h("div");
  const form = h(
    "form",
    { class: "row" },
    title.wrap,
    message.wrap,
    topic.wrap,
    h("label", {}, "Priority", priority),
    h("button", { type: "submit", class: "primary" }, "Send"),
  );
  onSubmit(form, out, async () => {
    await api.notify.notify(
      {
        title: title.input.value,
        message: message.input.value,
        topic: topic.input.value,
        priority: priority.value,
      },
      inProject(state.projectId),
    );
    title.input.value = "";
    message.input.value = "";
    await refresh();
  });
  return h("div", { class: "panel" }, h("h2", {}, "Send a notification"), out, form);
}

route("/notifications", {
  title: "Notifications",
  nav: true,
  render(main) {
    const list = h("ul", { class: "feed", "aria-label": "Notifications" });
    const status = h("p", { class: "muted" });
    const told = h("p", { class: "visually-hidden", role: "status" });
    const topic = field("Topic", { type: "search", placeholder: "all topics" });
    const seen = new Set<string>();
    let first = true;
    let watching = new AbortController();
    const left = new AbortController();
    const draw = (notifications: Notification[]) => {
      const open = new Set(
        [...list.querySelectorAll("li")]
          .filter((li) => !li.querySelector("[hidden]"))
          .map((li) => li.dataset.id),
      );
      fill(
        list,
        inPlace(notifications).map(({ n, replaced }) => {
          const li = item(n, !first && !seen.has(n.id), refresh);
          if (replaced > 0)
            li.querySelector(".head .title")?.after(badge(`updated ×${replaced}`, "sent"));
          if (open.has(n.id))
            (li.querySelector("button[aria-expanded]") as HTMLButtonElement).click();
          return li;
        }),
      );
      for (const n of notifications) seen.add(n.id);
      first = false;
      fill(
        status,
        notifications.length === 0
          ? firstPublish()
          : `Live: updated ${new Date().toLocaleTimeString()}`,
      );
    };
    const show = holdingFeed(list, status, told, draw, left.signal);
    const query = () => ({ pageSize: 50, topic: topic.input.value.trim() });
    async function refresh() {
      const page = await api.notify.listNotifications(query(), inProject(state.projectId));
      show(page.notifications, true);
    }
    // The live feed: a stream of the newest, sent again whenever they change (no polling), and
    // at least every refresh interval, by which a stream a network dropped is told (live.ts).
    const heard = whileHeard<WatchNotificationsResponse>((page) => page.refreshInterval);
    const open = (signal: AbortSignal) =>
      api.notify.watchNotifications(query(), { ...inProject(state.projectId), signal });
    const watch = async (signal: AbortSignal) => {
      while (!signal.aborted) {
        try {
          for await (const page of heard(open, signal)) show(page.notifications);
        } catch (err) {
          if (signal.aborted) return;
          fill(status, notice(`${errorText(err)}; reconnecting…`, "error"));
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
    };
    topic.input.addEventListener("input", () => {
      first = true;
      seen.clear();
      watching.abort();
      watching = new AbortController();
      void watch(watching.signal);
    });
    fill(
      main,
      sendForm(refresh),
      h("div", { class: "panel" }, h("div", { class: "row" }, topic.wrap), status, told, list),
    );
    void watch(watching.signal);
    return () => {
      watching.abort();
      left.abort();
    };
  },
});
