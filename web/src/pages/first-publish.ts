/** The notifications page's empty feed. */
import { h } from "../dom.ts";

/** The empty feed: how to publish the first one, as a command to copy. */
export function firstPublish(): HTMLElement {
  const command = `curl -H "Authorization: Bearer $HERALD_API_KEY" -d '{"title":"Hello"}' ${location.origin}/v1/notify`;
  const copy = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        await navigator.clipboard?.writeText(command).catch(() => {});
        copy.textContent = "Copied";
      },
    },
    "Copy",
  );
  return h(
    "div",
    {},
    h("p", {}, "Nothing published yet. Send one above, or with an API key:"),
    h("div", { class: "command" }, h("pre", {}, h("code", {}, command)), copy),
  );
}
