/** API keys of the project in use: create with scopes (the secret shown once), list, revoke. */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ApiKey } from "../../../gen/herald/v1/credential_pb.ts";
import { api, date, errorText } from "../api.ts";
import { currentProject, notice, onSubmit, route, state } from "../app.ts";
import { expiry, field, fill, h, shownOnce, toast, when } from "../dom.ts";

function row(k: ApiKey, refresh: () => Promise<void>): HTMLTableRowElement {
  return h(
    "tr",
    {},
    h("td", {}, k.name),
    h("td", {}, h("code", {}, k.displayPrefix)),
    h("td", {}, k.scopes.join(", ")),
    h("td", {}, when(date(k.createdAt))),
    h("td", {}, when(date(k.lastUsedAt))),
    h("td", {}, expiry(date(k.expiresAt))),
    h(
      "td",
      {},
      k.revokedAt
        ? h("span", { class: "badge disabled" }, "revoked")
        : h(
            "button",
            {
              type: "button",
              class: "danger",
              "aria-label": `Revoke ${k.name}`,
              onclick: async () => {
                if (!confirm(`Revoke ${k.name}? Publishing with it stops within a second.`)) return;
                try {
                  await api.keys.revokeApiKey({ id: k.id });
                  await refresh();
                } catch (err) {
                  toast(errorText(err));
                }
              },
            },
            "Revoke",
          ),
    ),
  );
}

route("/keys", {
  title: "API keys",
  nav: true,
  render(main) {
    const body = h("tbody");
    const refresh = async () => {
      const { apiKeys } = await api.keys.listApiKeys({ projectId: state.projectId });
      fill(
        body,
        apiKeys.map((k) => row(k, refresh)),
      );
    };
    const name = field("Key name", { required: true, placeholder: "ci" });
    const write = h("input", { type: "checkbox", checked: true });
    const read = h("input", { type: "checkbox" });
    const lifetime = h(
      "select",
      { "aria-label": "Expires" },
      ...[
        ["", "Never expires"],
        ["30", "Expires in 30 days"],
        ["90", "Expires in 90 days"],
        ["365", "Expires in a year"],
      ].map(([v, t]) => h("option", { value: v }, t)),
    );
    const out = h("div");
    const form = h(
      "form",
      { class: "row" },
      name.wrap,
      h("label", { class: "check" }, write, "write (publish)"),
      h("label", { class: "check" }, read, "read (history, status)"),
      lifetime,
      h("button", { type: "submit", class: "primary" }, "Create key"),
    );
    onSubmit(form, out, async () => {
      const scopes = [write.checked && "write", read.checked && "read"].filter(
        (s): s is string => !!s,
      );
      if (scopes.length === 0) {
        fill(out, notice("Give the key at least one scope.", "error"));
        return;
      }
      const { secret } = await api.keys.createApiKey({
        projectId: state.projectId,
        name: name.input.value,
        scopes,
        expiresAt: lifetime.value
          ? timestampFromDate(new Date(Date.now() + Number(lifetime.value) * 86_400_000))
          : undefined,
      });
      name.input.value = "";
      fill(out, shownOnce(secret, "API key", "key"));
      await refresh();
    });
    fill(
      main,
      h(
        "div",
        { class: "panel" },
        h("h2", {}, `New key for ${currentProject()?.name ?? "this project"}`),
        out,
        form,
      ),
      h(
        "div",
        { class: "panel" },
        h(
          "table",
          { "aria-label": "API keys" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Name", "Key", "Scopes", "Created", "Last used", "Expires", ""].map((t) =>
                h("th", {}, t),
              ),
            ),
          ),
          body,
        ),
      ),
    );
    void refresh();
    return undefined;
  },
});
