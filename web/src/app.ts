/**
 * The console's frame: who is signed in, the project in use, the router (paths, not hashes:
 * the server answers the page for each), and the shell around the signed-in pages.
 */
import type { Account } from "../../gen/herald/v1/account_pb.ts";
import type { Project } from "../../gen/herald/v1/project_pb.ts";
import { api, errorText, isSignedOut } from "./api.ts";
import { keepOnlyTheAccountsDevice, stopThisBrowser, thisBrowserButton } from "./browser-device.ts";
import { type Child, fill, h, toast } from "./dom.ts";

export interface State {
  account: Account | undefined;
  projects: Project[];
  projectId: string;
}

export const state: State = { account: undefined, projects: [], projectId: "" };

/** A page draws itself into `main`; what it returns is called when the page is left. */
export type Render = (
  main: HTMLElement,
) => Promise<(() => void) | undefined> | (() => void) | undefined;

export interface Route {
  title: string;
  render: Render;
  /** Shown in the side navigation. */
  nav?: boolean;
  /** Drawn without signing in (setup, sign-in, pairing a phone). */
  open?: boolean;
}

const routes = new Map<string, Route>();
let leave: (() => void) | undefined;

export function route(path: string, r: Route): void {
  routes.set(path, r);
}

export function navigate(path: string): void {
  history.pushState(null, "", path);
  void show();
}

/** A link that routes in the page. */
export function link(
  path: string,
  text: string,
  props: Record<string, unknown> = {},
): HTMLAnchorElement {
  return h(
    "a",
    {
      href: path,
      ...props,
      onclick: (e: MouseEvent) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        navigate(path);
      },
    },
    text,
  );
}

export async function loadSession(): Promise<boolean> {
  const was = state.account?.id;
  try {
    state.account = (await api.account.getAccount({})).account;
    state.projects = (await api.projects.listProjects({})).projects;
    const saved = localStorage.getItem("herald.project") ?? "";
    const known =
      state.projects.find((p) => p.id === saved) ?? state.projects.find((p) => p.isDefault);
    state.projectId = known?.id ?? "";
    // Another account's device kept in this browser is not this account's to receive with:
    // asked when the account signed in here changes (not on every reload of the same one).
    if (state.account?.id !== was) await keepOnlyTheAccountsDevice().catch(() => {});
    return true;
  } catch (err) {
    if (isSignedOut(err)) {
      state.account = undefined;
      return false;
    }
    throw err;
  }
}

export function setProject(id: string): void {
  state.projectId = id;
  localStorage.setItem("herald.project", id);
}

export const currentProject = () => state.projects.find((p) => p.id === state.projectId);

/** Ends the console session, and this browser as the account's device (browser-device.ts). */
function signOutButton(): HTMLElement {
  return h(
    "button",
    {
      type: "button",
      title: "Sign out; this browser stops receiving the account's notifications",
      onclick: async () => {
        const stopped = await stopThisBrowser();
        await api.auth.endSession({});
        state.account = undefined;
        navigate("/signin");
        if (stopped)
          toast("Signed out. This browser no longer receives the account's notifications.");
      },
    },
    "Sign out",
  );
}

/** The project every page shows. */
function projectSelect(): HTMLElement {
  return h(
    "select",
    {
      "aria-label": "Project",
      onchange: (e: Event) => {
        setProject((e.target as HTMLSelectElement).value);
        void show();
      },
    },
    state.projects.map((p) =>
      h("option", { value: p.id, selected: p.id === state.projectId }, p.name),
    ),
  );
}

function shell(path: string, title: string): HTMLElement {
  const app = document.getElementById("app") as HTMLElement;
  const main = h("main", { id: "main" });
  const nav = h(
    "nav",
    { "aria-label": "Console" },
    [...routes]
      .filter(([, r]) => r.nav)
      .map(([p, r]) => link(p, r.title, { "aria-current": p === path ? "page" : undefined })),
  );
  fill(
    app,
    h(
      "div",
      { class: "shell" },
      h(
        "aside",
        { class: "side" },
        h("div", { class: "brand" }, h("img", { src: "/icon.svg", alt: "" }), "Herald"),
        nav,
        h("div", { class: "foot" }, h("span", {}, state.account?.email ?? ""), signOutButton()),
      ),
      h(
        "div",
        { class: "content" },
        h(
          "header",
          { class: "top" },
          h("h1", {}, title),
          h("label", {}, "Project", projectSelect()),
          thisBrowserButton(),
        ),
        main,
      ),
    ),
  );
  return main;
}

/** Draws the page of the current path. */
export async function show(): Promise<void> {
  leave?.();
  leave = undefined;
  const path = location.pathname === "/" ? "/notifications" : location.pathname;
  const r = routes.get(path) ?? routes.get("/notifications");
  if (!r) return;
  document.title = `${r.title} · Herald`;
  if (!r.open && !state.account && !(await loadSession())) {
    const back = `${location.pathname}${location.search}`;
    history.replaceState(null, "", `/signin?next=${encodeURIComponent(back)}`);
    return show();
  }
  const app = document.getElementById("app") as HTMLElement;
  const main = r.open ? app : shell(path, r.title);
  try {
    leave = (await r.render(main)) ?? undefined;
  } catch (err) {
    fill(main, notice(errorText(err), "error"));
  }
}

export function notice(text: Child, kind: "error" | "ok" | "" = ""): HTMLElement {
  return h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/** A form's submit: disables the button while the call runs, shows the error where it failed. */
export function onSubmit(form: HTMLFormElement, out: HTMLElement, run: () => Promise<void>): void {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button[type=submit]") as HTMLButtonElement | null;
    if (button) button.disabled = true;
    fill(out);
    try {
      await run();
    } catch (err) {
      fill(out, notice(errorText(err), "error"));
    } finally {
      if (button) button.disabled = false;
    }
  });
}

/**
 * A form: its fields, a submit button, and above them the place (`out`) where its error, or a
 * notice `run` writes, appears.
 */
export function simpleForm(
  submit: string,
  fields: Child[],
  run: (out: HTMLElement) => Promise<void>,
  cls = "",
): HTMLFormElement {
  const out = h("div");
  const form = h(
    "form",
    cls ? { class: cls } : {},
    out,
    ...fields,
    h("button", { type: "submit", class: "primary" }, submit),
  );
  onSubmit(form, out, () => run(out));
  return form;
}

/** A row's button (`name` is its accessible name): runs `run`, and says in a toast if it failed. */
export function action(
  label: string,
  name: string,
  run: () => Promise<void>,
  kind = "",
): HTMLElement {
  const onclick = async () => {
    try {
      await run();
    } catch (err) {
      toast(errorText(err));
    }
  };
  return h("button", { type: "button", class: kind, "aria-label": name, onclick }, label);
}
