/** The ways in: the owner's setup link, sign-in and (when open) sign-up. */
import { api, errorText } from "../api.ts";
import { link, loadSession, navigate, notice, route, simpleForm } from "../app.ts";
import { field, fill, h, passwordField } from "../dom.ts";

function card(title: string, ...body: (Node | string)[]): HTMLElement {
  return h(
    "div",
    { class: "center" },
    h("div", { class: "brand" }, h("img", { src: "/icon.svg", alt: "" }), "Herald"),
    h("div", { class: "panel" }, h("h1", {}, title), ...body),
  );
}

const emailField = () =>
  field("Email", { type: "email", autocomplete: "username", required: true });

/** Where to go after signing in: `?next=` when it is one of ours. */
function next(): string {
  const n = new URLSearchParams(location.search).get("next") ?? "";
  return n.startsWith("/") && !n.startsWith("//") ? n : "/notifications";
}

route("/setup", {
  title: "Set the owner's password",
  open: true,
  render(app) {
    const token = location.hash.slice(1);
    const password = passwordField("New password", "new-password");
    const again = passwordField("Repeat the password", "new-password");
    const keep = h("input", { type: "checkbox" });
    // The account, for the person and for password managers (they save what `username` says).
    const username = h("input", {
      type: "email",
      name: "username",
      autocomplete: "username",
      readonly: true,
      "aria-label": "Account",
    });
    const whose = h("p", {}, "Checking the link…");
    const form = simpleForm(
      "Set password and sign in",
      [
        h("label", { class: "visually-hidden" }, "Account", username),
        password.wrap,
        again.wrap,
        h("label", { class: "check" }, keep, "keep my CLI tokens working"),
      ],
      async (out) => {
        if (password.input.value !== again.input.value) {
          fill(out, notice("The two passwords differ.", "error"));
          return;
        }
        await api.account.completeOwnerSetup({
          token,
          password: password.input.value,
          keepCliTokens: keep.checked,
        });
        await loadSession();
        navigate("/notifications");
      },
    );
    fill(
      app,
      card(
        "Welcome to Herald",
        h(
          "p",
          { class: "muted" },
          "Choose the owner's password: at least 12 characters. The link works once. A new password signs out the other console sessions and revokes the CLI tokens, unless you keep them.",
        ),
        token
          ? h("div", {}, whose, form)
          : notice("This page needs the setup link printed by npm start (it ends in #…).", "error"),
      ),
    );
    if (token) {
      api.account
        .describeSetupLink({ token })
        .then(({ email }) => {
          username.value = email;
          fill(whose, "Setting the password of ", h("strong", {}, email), ".");
        })
        .catch((err) => fill(whose, notice(errorText(err), "error")));
    }
    return undefined;
  },
});

route("/signin", {
  title: "Sign in",
  open: true,
  async render(app) {
    const email = emailField();
    const password = passwordField("Password", "current-password");
    const form = simpleForm("Sign in", [email.wrap, password.wrap], async () => {
      await api.auth.startSession({ email: email.input.value, password: password.input.value });
      await loadSession();
      navigate(next());
    });
    const { signupOpen } = await api.account.getServerInfo({});
    const deleted = new URLSearchParams(location.search).get("deleted");
    fill(
      app,
      card(
        "Sign in",
        ...(deleted === null
          ? []
          : [
              notice(
                `Your account and everything it held were deleted${Number(deleted) > 0 ? ` (${deleted} notifications)` : ""}.`,
                "ok",
              ),
            ]),
        form,
        signupOpen
          ? h("p", { class: "muted" }, "No account yet? ", link("/signup", "Create one"))
          : h(
              "p",
              { class: "muted" },
              "Lost the owner's password? The operator prints a new setup link with npm run owner:reset-password.",
            ),
      ),
    );
    return undefined;
  },
});

route("/signup", {
  title: "Create an account",
  open: true,
  render(app) {
    const email = emailField();
    const password = passwordField("Password", "new-password");
    const form = simpleForm("Create account", [email.wrap, password.wrap], async () => {
      await api.account.signUp({ email: email.input.value, password: password.input.value });
      await api.auth.startSession({ email: email.input.value, password: password.input.value });
      await loadSession();
      navigate("/notifications");
    });
    fill(
      app,
      card(
        "Create an account",
        form,
        h("p", { class: "muted" }, "Have one? ", link("/signin", "Sign in")),
      ),
    );
    return undefined;
  },
});
