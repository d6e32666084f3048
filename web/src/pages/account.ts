/** The account: this month's usage, the password, and the console sessions and CLI tokens. */
import type { CliToken } from "../../../gen/herald/v1/credential_pb.ts";
import { api, date, errorText } from "../api.ts";
import { notice, onSubmit, route, state } from "../app.ts";
import { expiry, fill, h, passwordField, toast, when } from "../dom.ts";
import { deletePanel } from "./account-delete.ts";

/** How a token was made, in words: two tokens named alike are told apart by it. */
function madeBy(t: CliToken): string {
  const how: Record<string, string> = {
    password: "CLI, password login",
    device_login: "CLI, device login",
    console: "console session",
    setup_link: "console session, setup link",
  };
  return how[t.madeBy] ?? (t.kind === "session" ? "console session" : "CLI");
}

function tokenRow(t: CliToken, refresh: () => Promise<void>): HTMLTableRowElement {
  return h(
    "tr",
    {},
    h("td", {}, t.name, t.current ? h("span", { class: "muted" }, " (this one)") : null),
    h("td", {}, madeBy(t)),
    h("td", {}, when(date(t.createdAt))),
    h("td", {}, when(date(t.lastUsedAt))),
    h("td", {}, expiry(date(t.expiresAt))),
    h(
      "td",
      {},
      t.revokedAt
        ? h("span", { class: "badge disabled" }, "revoked")
        : t.current
          ? null
          : h(
              "button",
              {
                type: "button",
                class: "danger",
                "aria-label": `Revoke ${t.name}`,
                onclick: async () => {
                  try {
                    await api.auth.revokeCliToken({ id: t.id });
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

/** How much of the month's quota the account used. */
async function usagePanel(): Promise<HTMLElement> {
  const usage = await api.account.getUsage({});
  const used = Math.min(
    100,
    (usage.notificationsUsed / Math.max(1, usage.notificationsQuota)) * 100,
  );
  // Through the CSSOM: the Content-Security-Policy refuses inline style attributes.
  const bar = h("div");
  bar.style.width = `${used}%`;
  return h(
    "div",
    { class: "panel" },
    h("h2", {}, "Usage this month"),
    h(
      "p",
      {},
      `${usage.notificationsUsed.toLocaleString()} of ${usage.notificationsQuota.toLocaleString()} notifications this month (the server's monthly limit per account, set by the operator with HERALD_MONTHLY_QUOTA); it starts again on ${date(usage.periodEnd)?.toLocaleDateString()}.`,
    ),
    h(
      "div",
      {
        class: "meter",
        role: "meter",
        "aria-label": "Notifications used this month",
        "aria-valuemin": 0,
        "aria-valuemax": usage.notificationsQuota,
        "aria-valuenow": usage.notificationsUsed,
      },
      bar,
    ),
  );
}

/** Changes the password; `refresh` redraws the CLI tokens it may have revoked. */
function passwordPanel(refresh: () => Promise<void>): HTMLElement {
  const current = passwordField("Current password", "current-password");
  const next = passwordField("New password", "new-password");
  const keep = h("input", { type: "checkbox" });
  const out = h("div");
  const form = h(
    "form",
    { class: "row" },
    current.wrap,
    next.wrap,
    h("label", { class: "check" }, keep, "keep my CLI tokens working"),
    h("button", { type: "submit", class: "primary" }, "Change password"),
  );
  onSubmit(form, out, async () => {
    const { sessionsEnded, cliTokensRevoked } = await api.account.changePassword({
      currentPassword: current.input.value,
      newPassword: next.input.value,
      keepCliTokens: keep.checked,
    });
    current.input.value = "";
    next.input.value = "";
    fill(
      out,
      notice(
        `Password changed. Signed out: ${sessionsEnded} other console session(s); revoked: ${cliTokensRevoked} CLI token(s)${keep.checked ? " (kept, as asked)" : ""}.`,
        "ok",
      ),
    );
    await refresh();
  });
  return h(
    "div",
    { class: "panel" },
    h("h2", {}, "Password"),
    h(
      "p",
      { class: "muted" },
      `Signed in as ${state.account?.email}. Changing the password signs out every other console session and revokes the account's CLI tokens (herald login again), unless you keep them.`,
    ),
    out,
    form,
  );
}

route("/account", {
  title: "Account",
  nav: true,
  async render(main) {
    const body = h("tbody");
    const refresh = async () => {
      const { cliTokens } = await api.auth.listCliTokens({});
      fill(
        body,
        cliTokens.filter((t) => !t.revokedAt).map((t) => tokenRow(t, refresh)),
      );
    };
    fill(
      main,
      await usagePanel(),
      passwordPanel(refresh),
      h(
        "div",
        { class: "panel" },
        h("h2", {}, "Sessions and CLI tokens"),
        h(
          "table",
          { "aria-label": "Sessions and CLI tokens" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Name", "Made by", "Created", "Last used", "Expires", ""].map((t) =>
                h("th", {}, t),
              ),
            ),
          ),
          body,
        ),
      ),
      deletePanel(),
    );
    await refresh();
    return undefined;
  },
});
