/** A small DOM builder: elements from a tag, properties and children; no framework. */
export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (key === "class") {
      el.className = String(value);
    } else if (key in el && typeof value !== "string") {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A labelled input: the label names it for screen readers and tests alike. */
export function field(
  label: string,
  props: Props = {},
): { wrap: HTMLLabelElement; input: HTMLInputElement } {
  const input = h("input", props);
  return { wrap: h("label", {}, label, input), input };
}

let seq = 0;
/** A unique id for aria relations. */
export const uid = (prefix: string) => `${prefix}-${++seq}`;

/** "3 min ago", "yesterday 14:02", or a date: how a person reads a time. */
export function when(d: Date | undefined): string {
  if (!d) return "never";
  const s = (Date.now() - d.getTime()) / 1000;
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** When a credential stops working: "never", "expired", or the date. */
export function expiry(d: Date | undefined): string {
  if (!d) return "never";
  if (d.getTime() <= Date.now()) return "expired";
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** How long a toast stays. */
export const toastMs = 6000;

/** A transient message in the corner (new notifications, copies, errors); its element. */
export function toast(text: string): HTMLElement {
  let box = document.querySelector(".toasts");
  if (!box) {
    box = h("div", { class: "toasts", role: "status", "aria-live": "polite" });
    document.body.append(box);
  }
  const t = h("div", { class: "toast" }, text);
  box.append(t);
  setTimeout(() => t.remove(), toastMs);
  return t;
}

/** A password input: `new-password` ones ask for the server's minimum of 12 characters. */
export function passwordField(label: string, autocomplete: "new-password" | "current-password") {
  return field(label, {
    type: "password",
    autocomplete,
    required: true,
    ...(autocomplete === "new-password" ? { minlength: 12 } : {}),
  });
}

/** A button that puts `text` on the clipboard and says so (`short` names it: "secret"). */
export function copyButton(text: string, short: string, label = `Copy ${short}`): HTMLElement {
  const copy = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        copy.textContent = "Copied";
        toast(`The ${short} is on your clipboard`);
      },
    },
    label,
  );
  return copy;
}

/** A secret shown this once (a new API key, a webhook signing secret), with a copy button. */
export function shownOnce(secret: string, what: string, short: string): HTMLElement {
  return h(
    "div",
    { class: "notice ok", role: "status" },
    h(
      "p",
      {},
      h("strong", {}, `Your new ${what}. `),
      "Copy it now: it is shown this once and never again.",
    ),
    h("p", { class: "secret", "aria-label": `New ${what}` }, secret),
    copyButton(secret, short),
  );
}
