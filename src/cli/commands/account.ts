/** `herald tokens list`, `herald account password` and `herald account delete`: the account's sign-ins, its password, and its end. */
import { AccountService } from "../../../gen/herald/v1/account_service_pb.ts";
import { AuthService } from "../../../gen/herald/v1/auth_service_pb.ts";
import { CliTokenSchema } from "../../../gen/herald/v1/credential_pb.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { resourceJson, table, when } from "../format.ts";

export const tokensList: Command = {
  name: "tokens list",
  summary: "list the account's CLI tokens and console sessions, with their expiry",
  usage: "herald tokens list [--json]",
  options: {},
  example: "herald tokens list",
  async run(ctx) {
    const { cliTokens } = await ctx
      .client(AuthService)
      .listCliTokens({}, { headers: ctx.headers(ctx.ownerToken) });
    ctx.out(
      table([
        ["ID", "NAME", "MADE BY", "TOKEN", "LAST USED", "EXPIRES", "REVOKED"],
        ...cliTokens.map((t) => [
          t.current ? `${t.id} *` : t.id,
          t.name,
          t.madeBy ? t.madeBy.replace("_", " ") : t.kind,
          t.displayPrefix,
          when(t.lastUsedAt),
          when(t.expiresAt),
          when(t.revokedAt),
        ]),
      ]),
      cliTokens.map((t) => resourceJson(CliTokenSchema, t)),
    );
    return exit.ok;
  },
};

/** The confirmation: the email typed at a prompt, or `--confirm` and the password on stdin. */
async function confirmation(ctx: Context, email: string, values: Record<string, unknown>) {
  if (typeof values.confirm === "string") {
    const password = ((await ctx.io.readStdin()) ?? "").split("\n")[0]?.replace(/\r$/, "");
    if (!values["password-stdin"] || !password) {
      throw new CliError("give the password on standard input with --password-stdin", exit.usage);
    }
    return { confirmEmail: values.confirm, password };
  }
  if (!ctx.io.isTty || !ctx.io.prompt) {
    throw new CliError(
      "not a terminal: give --confirm EMAIL and the password with --password-stdin",
      exit.usage,
    );
  }
  ctx.io.stderr(
    `This deletes the account ${email} and everything it holds: its projects and API keys, every\n` +
      "notification and delivery record, its devices, CLI tokens and console sessions.\n" +
      "It cannot be undone.\n\n",
  );
  const confirmEmail = (
    await ctx.io.prompt(`Type the account's email (${email}) to confirm: `, false)
  ).trim();
  if (confirmEmail.toLowerCase() !== email.toLowerCase()) {
    throw new CliError("the email does not match: nothing deleted", exit.canceled);
  }
  return { confirmEmail, password: await ctx.io.prompt("Password: ", true) };
}

export const accountDelete: Command = {
  name: "account delete",
  summary: "delete your account and all its data (asks you to type its email and password)",
  usage: "herald account delete [--confirm EMAIL --password-stdin]",
  options: { confirm: { type: "string" }, "password-stdin": { type: "boolean" } },
  flags: {
    confirm: "the account's email, typed out (for scripts; a terminal asks instead)",
    "password-stdin": "read the password from standard input",
  },
  example: "herald account delete",
  async run(ctx, { values }) {
    const headers = { headers: ctx.headers(ctx.ownerToken) };
    const accounts = ctx.client(AccountService);
    const me = (await accounts.getAccount({}, headers)).account;
    const email = me?.email ?? "";
    const res = await accounts.deleteAccount(await confirmation(ctx, email, values), headers);
    // Every token of the account stopped working: forget the saved one.
    ctx.config.update(({ token: _t, email: _e, ...rest }) => rest);
    ctx.out(
      `deleted the account ${email} (${res.notificationsDeleted} notifications with it); this machine is logged out`,
      { deleted: true, email, notifications_deleted: Number(res.notificationsDeleted) },
    );
    return exit.ok;
  },
};

/** The current and the new password: typed at prompts (the new one twice), or two stdin lines. */
async function passwords(ctx: Context, fromStdin: boolean) {
  if (fromStdin || !ctx.io.isTty || !ctx.io.prompt) {
    const [current, next] = ((await ctx.io.readStdin()) ?? "")
      .split("\n")
      .map((l) => l.replace(/\r$/, ""));
    if (!current || !next) {
      throw new CliError(
        "give the current and the new password on two lines of standard input (--password-stdin)",
        exit.usage,
      );
    }
    return { currentPassword: current, newPassword: next };
  }
  const currentPassword = await ctx.io.prompt("Current password: ", true);
  const newPassword = await ctx.io.prompt("New password (12 characters or more): ", true);
  if ((await ctx.io.prompt("New password again: ", true)) !== newPassword) {
    throw new CliError("the two new passwords differ: nothing changed", exit.usage);
  }
  return { currentPassword, newPassword };
}

export const accountPassword: Command = {
  name: "account password",
  summary: "change your password; signs out the other console sessions and revokes CLI tokens",
  usage: "herald account password [--keep-cli-tokens] [--password-stdin]",
  options: { "keep-cli-tokens": { type: "boolean" }, "password-stdin": { type: "boolean" } },
  flags: {
    "keep-cli-tokens": "keep the account's other CLI tokens working (this machine's always is)",
    "password-stdin": "read the current and the new password from two lines of standard input",
  },
  example: "herald account password --keep-cli-tokens",
  async run(ctx, { values }) {
    const keep = values["keep-cli-tokens"] === true;
    const res = await ctx
      .client(AccountService)
      .changePassword(
        { ...(await passwords(ctx, values["password-stdin"] === true)), keepCliTokens: keep },
        { headers: ctx.headers(ctx.ownerToken) },
      );
    const tokens = keep
      ? "the CLI tokens kept, as asked"
      : `${res.cliTokensRevoked} other CLI token(s) revoked (herald login again there)`;
    ctx.out(
      `password changed: ${res.sessionsEnded} other console session(s) signed out, ${tokens}; this machine stays signed in`,
      {
        changed: true,
        sessions_ended: res.sessionsEnded,
        cli_tokens_revoked: res.cliTokensRevoked,
      },
    );
    return exit.ok;
  },
};
