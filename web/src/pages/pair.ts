/**
 * `/pair#CODE`: a phone (or another computer) opened the pairing link. Without signing in, it
 * becomes a receiving device with the one-time code: by Web Push where the browser has it
 * (Android Chrome; iOS Safari 16.4+ once Herald is on the home screen), else while open.
 */
import { errorText } from "../api.ts";
import { notice, route } from "../app.ts";
import { pairThisBrowser } from "../browser-device.ts";
import { fill, h } from "../dom.ts";
import { loadDevice } from "../idb.ts";

/** Signs this browser in with the pairing code, saying in `out` how it went. */
function pairButton(code: string, out: HTMLElement): HTMLButtonElement {
  const go = h(
    "button",
    {
      type: "button",
      class: "primary",
      onclick: async () => {
        go.disabled = true;
        try {
          const r = await pairThisBrowser(code);
          fill(
            out,
            notice(
              r.platform === "web"
                ? "Done: this device receives Herald notifications, even with the browser closed."
                : `Web Push is unavailable here (${r.why}); this page receives notifications while it stays open.`,
              "ok",
            ),
          );
        } catch (err) {
          go.disabled = false;
          fill(out, notice(errorText(err), "error"));
        }
      },
    },
    "Receive notifications on this device",
  );
  return go;
}

route("/pair", {
  title: "Receive notifications here",
  open: true,
  async render(app) {
    const code = location.hash.slice(1);
    const out = h("div");
    const standalone = matchMedia("(display-mode: standalone)").matches;
    const iosBrowser = /iPhone|iPad/.test(navigator.userAgent) && !standalone;
    const go = pairButton(code, out);
    const already = await loadDevice();
    fill(
      app,
      h(
        "div",
        { class: "center" },
        h("div", { class: "brand" }, h("img", { src: "/icon.svg", alt: "" }), "Herald"),
        h(
          "div",
          { class: "panel" },
          h("h1", {}, "Receive notifications here"),
          already ? notice("This device already receives Herald notifications.", "ok") : null,
          iosBrowser
            ? notice(
                "On an iPhone or iPad: tap Share, then “Add to Home Screen”, and open Herald from the home screen. Then open this link again.",
              )
            : null,
          code
            ? go
            : notice("This page needs the pairing link from the console (it ends in #…).", "error"),
          out,
        ),
      ),
    );
    return undefined;
  },
});
