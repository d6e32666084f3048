/** The notifications page's empty feed. */
import { copyButton, h } from "../dom.ts";

/** The empty feed: how to publish the first one, as a command to copy. */
export function firstPublish(): HTMLElement {
  const command = `curl -H "Authorization: Bearer $HERALD_API_KEY" -d '{"title":"Hello"}' ${location.origin}/v1/notify`;
  const copy = copyButton(command, "command", "Copy");
  return h(
    "div",
    {},
    h("p", {}, "Nothing published yet. Send one above, or with an API key:"),
    h("div", { class: "command" }, h("pre", {}, h("code", {}, command)), copy),
  );
}
