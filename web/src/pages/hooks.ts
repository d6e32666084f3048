/**
 * Inbound hooks of the project in use: make one for GitHub, GitLab, Alertmanager, Grafana or any
 * JSON (a generic hook's template fields appear when it is chosen); its URL and secret are shown
 * once with copy buttons, with the sender's ready-to-paste configuration; rotate, delete.
 */
import type { Hook } from "../../../gen/herald/v1/hook_service_pb.ts";
import { hookKinds } from "../../../src/domain/hooks/kinds.ts";
import { senderSnippet } from "../../../src/domain/hooks/snippets.ts";
import { api, date, errorText, inProject } from "../api.ts";
import { action, currentProject, notice, onSubmit, route, state } from "../app.ts";
import { copyButton, field, fill, h, when } from "../dom.ts";

const senders: Record<string, string> = {
  github: "GitHub",
  gitlab: "GitLab",
  alertmanager: "Alertmanager",
  grafana: "Grafana",
  generic: "Any JSON (template)",
  email: "Email",
};

/** A caption, and a text in a box with its copy button. */
function copyable(caption: string, label: string, text: string, short: string): HTMLElement[] {
  return [
    h("p", { class: "muted" }, caption),
    h(
      "div",
      { class: "command" },
      h("pre", { "aria-label": label }, text),
      copyButton(text, short),
    ),
  ];
}

/** What a new hook (or a rotation) shows once: URL, secret and the sender's snippet. */
function shownOnce(hook: Hook, secret: string, address: string): HTMLElement {
  const snippet = senderSnippet(hook.kind, hook.url, secret, address);
  return h(
    "div",
    { class: "notice ok", role: "status" },
    h(
      "p",
      {},
      h("strong", {}, `${senders[hook.kind] ?? hook.kind} hook "${hook.name}". `),
      "Copy the secret now: it is shown this once and never again.",
    ),
    copyable("URL (where the sender posts)", "Hook URL", hook.url, "URL"),
    copyable("Secret", "Hook secret", secret, "secret"),
    address
      ? copyable("Email address (it carries the secret)", "Hook address", address, "address")
      : null,
    copyable(
      `Paste into ${senders[hook.kind] ?? "the sender"}:`,
      "Sender configuration",
      snippet,
      "configuration",
    ),
  );
}

function row(hook: Hook, out: HTMLElement, refresh: () => Promise<void>): HTMLElement {
  const ref = { projectId: "-", hookId: hook.id };
  const project = inProject(state.projectId);
  return h(
    "tr",
    {},
    h("td", {}, senders[hook.kind] ?? hook.kind),
    h("td", {}, hook.name),
    h("td", {}, hook.topic || h("span", { class: "muted" }, "none")),
    h("td", {}, h("code", {}, hook.url), " ", copyButton(hook.url, "URL", "Copy")),
    h("td", { class: "muted" }, when(date(hook.createdAt))),
    h(
      "td",
      {},
      action("Rotate secret", `Rotate the secret of ${hook.name}`, async () => {
        const res = await api.hooks.rotateHookSecret(ref, project);
        if (res.hook) fill(out, shownOnce(res.hook, res.secret, res.address));
        await refresh();
      }),
      action(
        "Delete",
        `Delete ${hook.name}`,
        async () => {
          if (!confirm(`Delete the hook ${hook.name}? Its sender is refused from now on.`)) return;
          await api.hooks.deleteHook(ref, project);
          await refresh();
        },
        "danger",
      ),
    ),
  );
}

/** The new hook's form; a generic hook's template fields show when it is the kind chosen. */
function hookForm(out: HTMLElement, refresh: () => Promise<void>): HTMLElement {
  const kind = h(
    "select",
    { "aria-label": "Sender" },
    ...hookKinds.map((k) => h("option", { value: k }, senders[k] ?? k)),
  ) as HTMLSelectElement;
  const name = field("Name", { required: true, placeholder: "prod alerts", maxlength: "100" });
  const topic = field("Topic", { placeholder: "oncall", pattern: "[a-z0-9_\\-]{0,64}" });
  const templates = {
    title: field("Title template", { placeholder: "{{service}} is {{status}}" }),
    message: field("Message template", { placeholder: "{{details}}" }),
    priority: field("Priority template", { placeholder: "{{severity}}" }),
    clickUrl: field("Link template", { placeholder: "{{url}}" }),
  };
  const generic = h(
    "fieldset",
    { class: "events", style: "display: none" },
    h(
      "legend",
      {},
      "Template (Mustache; empty: the body's own title, message, priority, click_url)",
    ),
    ...Object.values(templates).map((f) => f.wrap),
  );
  kind.onchange = () => {
    generic.style.display = kind.value === "generic" ? "" : "none";
  };
  const form = h(
    "form",
    {},
    h("div", { class: "row" }, h("label", {}, "Sender", kind), name.wrap, topic.wrap),
    generic,
    h("button", { type: "submit", class: "primary" }, "Create hook"),
  );
  onSubmit(form, out, async () => {
    const template =
      kind.value === "generic"
        ? Object.fromEntries(Object.entries(templates).map(([k, f]) => [k, f.input.value]))
        : undefined;
    const res = await api.hooks.createHook(
      {
        projectId: "-",
        kind: kind.value,
        name: name.input.value,
        topic: topic.input.value,
        template,
      },
      inProject(state.projectId),
    );
    name.input.value = "";
    if (res.hook) fill(out, shownOnce(res.hook, res.secret, res.address));
    await refresh();
  });
  return form;
}

route("/hooks", {
  title: "Hooks",
  nav: true,
  render(main) {
    const body = h("tbody");
    const out = h("div");
    const refresh = async () => {
      const { hooks } = await api.hooks.listHooks({ projectId: "-" }, inProject(state.projectId));
      fill(
        body,
        hooks.length > 0
          ? hooks.map((hook) => row(hook, out, refresh))
          : h("tr", {}, h("td", { colspan: "6", class: "muted" }, "No hooks yet.")),
      );
    };
    const columns = ["Sender", "Name", "Topic", "URL", "Created", ""];
    fill(
      main,
      h(
        "div",
        { class: "panel" },
        h("h2", {}, `New hook for ${currentProject()?.name ?? "this project"}`),
        h(
          "p",
          { class: "muted" },
          "A sender posts its own payload to the hook's URL; each event becomes a notification. ",
          h(
            "a",
            { href: "/docs/integrations.md", target: "_blank", rel: "noopener" },
            "docs/integrations.md",
          ),
          " says what each sender's events become.",
        ),
        out,
        hookForm(out, refresh),
      ),
      h(
        "div",
        { class: "panel" },
        h(
          "table",
          { "aria-label": "Hooks" },
          h("thead", {}, h("tr", {}, ...columns.map((t) => h("th", {}, t)))),
          body,
        ),
      ),
    );
    void refresh().catch((err) => fill(out, notice(errorText(err), "error")));
    return undefined;
  },
});
