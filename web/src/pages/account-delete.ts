/**
 * The account page's last panel: deleting the account and everything in it. The button stays
 * disabled until the account's email is typed out; the password is asked too.
 */
import { api } from "../api.ts";
import { navigate, onSubmit, state } from "../app.ts";
import { field, h, passwordField } from "../dom.ts";

export function deletePanel(): HTMLElement {
  const email = state.account?.email ?? "";
  if (state.account?.isOwner) {
    return h(
      "div",
      { class: "panel" },
      h("h2", {}, "Deleting this account"),
      h(
        "p",
        { class: "muted" },
        "This is the server's owner account: it cannot be deleted, since the server would be left without anyone to run it. To remove everything, the operator stops Herald and deletes its data directory (or its database); see docs/operations.md.",
      ),
    );
  }
  const typed = field(`Type ${email} to confirm`, {
    required: true,
    autocomplete: "off",
    spellcheck: false,
  });
  const password = passwordField("Password", "current-password");
  const button = h(
    "button",
    { type: "submit", class: "danger", disabled: true },
    "Delete account permanently",
  );
  typed.input.addEventListener("input", () => {
    button.disabled = typed.input.value.trim().toLowerCase() !== email.toLowerCase();
  });
  const out = h("div");
  const form = h("form", { class: "row" }, typed.wrap, password.wrap, button);
  onSubmit(form, out, async () => {
    const { notificationsDeleted } = await api.account.deleteAccount({
      confirmEmail: typed.input.value,
      password: password.input.value,
    });
    state.account = undefined;
    navigate(`/signin?deleted=${notificationsDeleted}`);
  });
  return h(
    "div",
    { class: "panel danger-zone" },
    h("h2", {}, "Delete this account"),
    h(
      "p",
      {},
      "Deletes the account and everything it holds: its projects and API keys, every notification " +
        "and its delivery record, its devices, CLI tokens and console sessions. It cannot be undone.",
    ),
    out,
    form,
  );
}
