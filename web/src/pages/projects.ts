/** The account's projects: create, rename, delete (the default one stays). */
import type { Project } from "../../../gen/herald/v1/project_pb.ts";
import { api, date, errorText } from "../api.ts";
import { loadSession, onSubmit, route, show } from "../app.ts";
import { field, fill, h, toast, when } from "../dom.ts";

function row(p: Project): HTMLTableRowElement {
  const act = (label: string, run: () => Promise<unknown>, cls = "") =>
    h(
      "button",
      {
        type: "button",
        class: cls,
        "aria-label": `${label} ${p.name}`,
        onclick: async () => {
          try {
            await run();
            await loadSession();
            await show();
          } catch (err) {
            toast(errorText(err));
          }
        },
      },
      label,
    );
  return h(
    "tr",
    {},
    h("td", {}, p.name, p.isDefault ? h("span", { class: "muted" }, " (default)") : null),
    h("td", {}, when(date(p.createdAt))),
    h(
      "td",
      { class: "actions-cell" },
      act("Rename", async () => {
        const name = prompt(`New name for ${p.name}`, p.name);
        if (name && name !== p.name) await api.projects.renameProject({ id: p.id, name });
      }),
      p.isDefault
        ? null
        : act(
            "Delete",
            async () => {
              if (confirm(`Delete ${p.name}, its keys and its history? This cannot be undone.`))
                await api.projects.deleteProject({ id: p.id });
            },
            "danger",
          ),
    ),
  );
}

route("/projects", {
  title: "Projects",
  nav: true,
  async render(main) {
    const { projects } = await api.projects.listProjects({});
    const name = field("Project name", { required: true, placeholder: "payments" });
    const out = h("div");
    const form = h(
      "form",
      { class: "row" },
      name.wrap,
      h("button", { type: "submit", class: "primary" }, "Create project"),
    );
    onSubmit(form, out, async () => {
      await api.projects.createProject({ name: name.input.value });
      await loadSession();
      await show();
    });
    fill(
      main,
      h(
        "div",
        { class: "panel" },
        h("h2", {}, "New project"),
        h(
          "p",
          { class: "muted" },
          "A project has its own API keys and history; your devices receive from all of them.",
        ),
        out,
        form,
      ),
      h(
        "div",
        { class: "panel" },
        h(
          "table",
          { "aria-label": "Projects" },
          h("thead", {}, h("tr", {}, ...["Name", "Created", ""].map((t) => h("th", {}, t)))),
          h("tbody", {}, projects.map(row)),
        ),
      ),
    );
    return undefined;
  },
});
