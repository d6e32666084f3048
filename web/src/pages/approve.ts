/** `/device`: a `herald login` waiting for approval, approved or denied from the console. */
import { api } from "../api.ts";
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
        out,
        form,
      ),
    );
    return undefined;
  },
});
