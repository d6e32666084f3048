/**
 * Webhooks of the project in use: register an endpoint for chosen events (its signing secret
 * shown once), see each one's state and why it was disabled, enable, rotate the secret, delete,
 * and its latest attempts.
 */
import type { WebhookEndpoint } from "../../../gen/herald/v1/webhook_service_pb.ts";
import { webhookEventTypes as eventTypes } from "../../../src/domain/webhook-events.ts";
import { api, date, errorText, inProject } from "../api.ts";
import { action, currentProject, notice, onSubmit, route, state } from "../app.ts";
import { field, fill, h, shownOnce, when } from "../dom.ts";

function row(e: WebhookEndpoint, out: HTMLElement, refresh: () => Promise<void>) {
  const project = inProject(state.projectId);
  const attempts = h("td", { class: "muted" }, "…");
  void api.webhooks
    .listWebhookAttempts({ endpointId: e.id, pageSize: 1 }, project)
    .then(({ attempts: [a] }) => {
      fill(
        attempts,
        a
          ? `${a.succeeded ? "✓" : "✗"} ${a.eventType} ${a.statusCode || a.error} · ${when(date(a.attemptedAt))}`
          : "none yet",
      );
    })
    .catch(() => fill(attempts, "—"));
  return h(
    "tr",
    {},
    h("td", {}, h("code", {}, e.url)),
    h("td", {}, e.eventTypes.join(", ")),
    h(
      "td",
      {},
      e.enabled
        ? h("span", { class: "badge sent" }, "enabled")
        : h("span", { class: "badge failed", title: e.disabledReason }, "disabled"),
      e.enabled ? null : h("div", { class: "muted" }, e.disabledReason),
    ),
    attempts,
    h(
      "td",
      {},
      e.enabled
        ? null
        : action("Enable", `Enable ${e.url}`, async () => {
            await api.webhooks.enableWebhookEndpoint({ id: e.id }, project);
            await refresh();
          }),
      action("Rotate secret", `Rotate the secret of ${e.url}`, async () => {
        const { secret } = await api.webhooks.rotateWebhookSecret({ id: e.id }, project);
        fill(out, shownOnce(secret, "signing secret (the old one also signs for a day)", "secret"));
      }),
      action(
        "Delete",
        `Delete ${e.url}`,
        async () => {
          if (!confirm(`Delete the endpoint ${e.url}? Nothing more is sent to it.`)) return;
          await api.webhooks.deleteWebhookEndpoint({ id: e.id }, project);
          await refresh();
        },
        "danger",
      ),
    ),
  );
}

/** The new endpoint's form: its URL and events; the secret is shown once in `out`. */
function endpointForm(out: HTMLElement, refresh: () => Promise<void>): HTMLElement {
  const url = field("Endpoint URL", {
    required: true,
    type: "url",
    placeholder: "https://hooks.example.com/herald",
  });
  url.wrap.classList.add("wide");
  const boxes = eventTypes.map((t) => ({
    t,
    box: h("input", {
      type: "checkbox",
      checked: t === "notification.delivered" || t === "delivery.failed",
    }),
  }));
  const form = h(
    "form",
    {},
    h("div", { class: "row" }, url.wrap),
    h(
      "fieldset",
      { class: "events" },
      h("legend", {}, "Events"),
      ...boxes.map(({ t, box }) => h("label", { class: "check" }, box, t)),
    ),
    h("button", { type: "submit", class: "primary" }, "Add endpoint"),
  );
  onSubmit(form, out, async () => {
    const chosen = boxes.filter((b) => b.box.checked).map((b) => b.t);
    if (chosen.length === 0) {
      fill(out, notice("Choose at least one event.", "error"));
      return;
    }
    const { secret } = await api.webhooks.createWebhookEndpoint(
      { url: url.input.value, eventTypes: chosen },
      inProject(state.projectId),
    );
    url.input.value = "";
    fill(out, shownOnce(secret, "signing secret", "secret"));
    await refresh();
  });
  return form;
}

route("/webhooks", {
  title: "Webhooks",
  nav: true,
  render(main) {
    const body = h("tbody");
    const out = h("div");
    const refresh = async () => {
      const { endpoints } = await api.webhooks.listWebhookEndpoints({}, inProject(state.projectId));
      fill(
        body,
        endpoints.length > 0
          ? endpoints.map((e) => row(e, out, refresh))
          : h("tr", {}, h("td", { colspan: "5", class: "muted" }, "No endpoints yet.")),
      );
    };
    const form = endpointForm(out, refresh);
    fill(
      main,
      h(
        "div",
        { class: "panel" },
        h("h2", {}, `New webhook for ${currentProject()?.name ?? "this project"}`),
        h(
          "p",
          { class: "muted" },
          "Signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature): ",
          h(
            "a",
            { href: "/docs/api.md", target: "_blank", rel: "noopener" },
            "docs/api.md, Webhooks",
          ),
          ". Endpoints must be public unless the operator sets HERALD_WEBHOOK_ALLOW_PRIVATE=1.",
        ),
        out,
        form,
      ),
      h(
        "div",
        { class: "panel" },
        h(
          "table",
          { "aria-label": "Webhook endpoints" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["URL", "Events", "State", "Last attempt", ""].map((t) => h("th", {}, t)),
            ),
          ),
          body,
        ),
      ),
    );
    void refresh().catch((err) => fill(out, notice(errorText(err), "error")));
    return undefined;
  },
});
