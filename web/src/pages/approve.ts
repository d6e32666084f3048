/** `/device`: a `herald login` waiting for approval, approved or denied from the console. */
import { api, date, errorText } from "../api.ts";
import { notice, onSubmit, route } from "../app.ts";
import { field, fill, h } from "../dom.ts";

route("/device", {
  title: "Approve a sign-in",
  render(main) {
    const code = field("Code shown by herald login", {
      value: new URLSearchParams(location.search).get("user_code") ?? "",
      autocomplete: "off",
      required: true,
    });
    const out = h("div");
    const who = h("div", { class: "who" });
    /** Who is asking with this code: the machine, its address and client, and how long ago. */
    const lookUp = async () => {
      const userCode = code.input.value.trim();
      if (userCode === "") return fill(who);
      try {
        const p = await api.auth.getPendingLogin({ userCode });
        const started = date(p.createdAt);
        const minutes = started
          ? Math.max(0, Math.round((Date.now() - started.getTime()) / 60_000))
          : 0;
        const expires = date(p.tokenExpiresAt);
        fill(
          who,
          h(
            "dl",
            {},
            h("dt", {}, "Machine"),
            h("dd", {}, p.tokenName || "(unnamed)"),
            h("dt", {}, "From"),
            h("dd", {}, p.requestedFrom || "unknown address"),
            h("dt", {}, "Client"),
            h("dd", {}, p.userAgent || "unknown"),
            h("dt", {}, "Started"),
            h("dd", {}, minutes === 0 ? "just now" : `${minutes} minute(s) ago`),
            h("dt", {}, "Its token"),
            h("dd", {}, expires ? `expires ${expires.toLocaleDateString()}` : "never expires"),
          ),
        );
      } catch (err) {
        fill(who, notice(errorText(err), "error"));
      }
    };
    code.input.addEventListener("change", () => void lookUp());
    void lookUp();
    let approve = true;
    const form = h(
      "form",
      { class: "row" },
      code.wrap,
      h(
        "button",
        {
          type: "submit",
          class: "primary",
          onclick: () => {
            approve = true;
          },
        },
        "Approve",
      ),
      h(
        "button",
        {
          type: "submit",
          class: "danger",
          onclick: () => {
            approve = false;
          },
        },
        "Deny",
      ),
    );
    onSubmit(form, out, async () => {
      if (approve) {
        const { tokenName } = await api.auth.approveLogin({ userCode: code.input.value });
        fill(out, notice(`Approved: "${tokenName}" is signed in to your account.`, "ok"));
      } else {
        await api.auth.denyLogin({ userCode: code.input.value });
        fill(out, notice("Denied: that sign-in gets no token.", "ok"));
      }
    });
    fill(
      main,
      h(
        "div",
        { class: "panel" },
        h(
          "p",
          {},
          "A device is asking to sign in to your account. Approve it only if you started it and the code matches.",
        ),
        who,
        out,
        form,
      ),
    );
    return undefined;
  },
});
