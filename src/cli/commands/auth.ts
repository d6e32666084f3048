/** `herald login | logout | whoami`. */
import { hostname } from "node:os";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { AccountService } from "../../../gen/herald/v1/account_service_pb.ts";
import { AuthService } from "../../../gen/herald/v1/auth_service_pb.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit, type SavedConfig } from "../context.ts";
import { expiryOf } from "../format.ts";
import { retire, sameLogin } from "../retire.ts";
import { deviceOf, loginDevices, withoutDevices } from "../saved-devices.ts";

const spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

async function passwordLogin(
  ctx: Context,
  email: string | undefined,
  fromStdin: boolean,
  expiresAt: Timestamp | undefined,
) {
  let account = email;
  let password: string | undefined;
  if (fromStdin || !ctx.io.isTty || !ctx.io.prompt) {
    // Non-interactive: the password (after the email, when --email is not given) on stdin.
    const lines = ((await ctx.io.readStdin()) ?? "").split("\n");
    account ??= lines.shift()?.trim();
    password = lines[0]?.replace(/\r$/, "");
  } else {
    account ??= (await ctx.io.prompt("Email: ", false)).trim();
    password = await ctx.io.prompt("Password: ", true);
  }
  if (!account || !password) {
    throw new CliError(
      "give --email and the password on standard input (--password-stdin), or use --device",
      exit.usage,
    );
  }
  return ctx
    .client(AuthService)
    .login({ email: account, password, tokenName: hostname(), expiresAt });
}

async function deviceLogin(ctx: Context, expiresAt: Timestamp | undefined): Promise<string> {
  const auth = ctx.client(AuthService);
  // Whoever approves the code is shown this machine's name, address and client.
  const userAgent = `herald-cli (${process.platform}; node ${process.versions.node})`;
  const start = await auth.startLogin(
    { tokenName: hostname(), expiresAt },
    { headers: { "user-agent": userAgent } },
  );
  ctx.io.stderr(
    `To sign in this machine, approve code ${start.userCode} from a machine where you are signed in:\n\n` +
      `  herald login --approve ${start.userCode}\n\n(see ${start.verificationUriComplete}; the code expires in ${Math.round(start.expiresIn / 60)} minutes)\n`,
  );
  let interval = start.interval;
  for (let i = 0; ; i++) {
    if (ctx.io.isTty) ctx.io.stderr(`\r${spinner[i % spinner.length]} waiting for approval…`);
    // Ctrl-C ends the wait at once (the first one: nothing else is listening for it).
    const canceled = await new Promise<boolean>((resolve) => {
      const signal = ctx.io.signal;
      if (signal?.aborted) return resolve(true);
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve(false);
      }, interval * 1000);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(true);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    if (canceled) {
      if (ctx.io.isTty) ctx.io.stderr("\r\x1b[K");
      throw new CliError("login canceled", exit.canceled);
    }
    const poll = await auth.pollLogin({ deviceCode: start.deviceCode });
    interval = poll.interval || interval;
    // The spinner's last frame goes with the wait.
    const over = ["approved", "access_denied", "expired_token"].includes(poll.status);
    if (over && ctx.io.isTty) ctx.io.stderr("\r\x1b[K");
    if (poll.status === "approved") return poll.token;
    if (poll.status === "access_denied") throw new CliError("the login was denied", exit.auth);
    if (poll.status === "expired_token")
      throw new CliError("the code expired: run `herald login --device` again", exit.auth);
  }
}

export const login: Command = {
  name: "login",
  summary: "sign this machine in (password, or --device to approve from another machine)",
  usage:
    "herald login [--email EMAIL --password-stdin | --device | --approve CODE] [--expires 90d|DATE]",
  options: {
    expires: { type: "string" },
    email: { type: "string" },
    "password-stdin": { type: "boolean" },
    device: { type: "boolean" },
    approve: { type: "string" },
  },
  flags: {
    expires:
      "when the token stops working: a duration (90d, 12h) or a date (2027-01-31); default never",
    email: "the account's email (a terminal asks when it is not given)",
    "password-stdin":
      "read the password from standard input (for scripts); a terminal asks instead",
    device: "sign in by approving a code from another signed-in machine or the console (RFC 8628)",
    approve: "CODE: approve another machine's `herald login --device`, showing who is asking",
  },
  example: "herald login --email me@example.com --expires 90d",
  async run(ctx, { values }) {
    if (typeof values.approve === "string") {
      const auth = ctx.client(AuthService);
      const headers = { headers: ctx.headers(ctx.ownerToken) };
      const asking = await auth.getPendingLogin({ userCode: values.approve }, headers);
      const res = await auth.approveLogin({ userCode: values.approve }, headers);
      const who = [asking.requestedFrom && `from ${asking.requestedFrom}`, asking.userAgent]
        .filter(Boolean)
        .join(", ");
      ctx.out(`approved: ${res.tokenName}${who ? ` (${who})` : ""} is signed in`, {
        approved: true,
        token_name: res.tokenName,
      });
      return exit.ok;
    }
    const expiresAt = expiryOf(values.expires);
    const token = values.device
      ? await deviceLogin(ctx, expiresAt)
      : (
          await passwordLogin(
            ctx,
            values.email as string | undefined,
            Boolean(values["password-stdin"]),
            expiresAt,
          )
        ).token;
    const me = await ctx
      .client(AccountService)
      .getAccount({}, { headers: { authorization: `Bearer ${token}` } });
    const next = { url: ctx.url, token, email: me.account?.email, accountId: me.account?.id };
    // The token this login replaces is revoked; another account's (or server's) device and
    // project in use go with it, where the same account's are kept.
    const before = ctx.config.load();
    const same = sameLogin(before, next);
    const { ended, failed } = await retire(ctx, before, { device: !same, token: true });
    // Devices of other servers or accounts (`HERALD_TOKEN`'s) stay: this login did not make them.
    const others = (c: SavedConfig) => withoutDevices(c, loginDevices(c, ctx.url), ctx.url);
    ctx.config.update((c) => ({ ...(same ? c : { devices: others(c).devices }), ...next }));
    if (ctx.io.isTty) ctx.io.stderr("\n");
    for (const line of failed) ctx.io.stderr(`warning: ${line}\n`);
    ctx.out([`logged in as ${me.account?.email} (${ctx.url})`, ...ended].join("\n"), {
      email: me.account?.email,
      url: ctx.url,
      ended,
    });
    return exit.ok;
  },
};

export const logout: Command = {
  name: "logout",
  summary: "revoke this machine's CLI token, sign out its stream device, and forget both",
  usage: "herald logout",
  options: {},
  example: "herald logout",
  async run(ctx) {
    await ctx.client(AuthService).logout({}, { headers: ctx.headers(ctx.ownerToken) });
    // This machine's stream device stops receiving with it (retire.ts).
    const { ended, failed } = await retire(ctx, ctx.config.load(), { device: true, token: false });
    ctx.config.update((c) => {
      const { token: _t, ...rest } = withoutDevices(c, loginDevices(c, ctx.url), ctx.url);
      return rest;
    });
    for (const line of failed) ctx.io.stderr(`warning: ${line}\n`);
    ctx.out(["logged out", ...ended].join("; "), { logged_out: true, ended });
    return exit.ok;
  },
};

/** What `whoami` shows of a credential: its kind, its first characters, where it came from. */
const describe = (c: { secret: string; kind: string; source: string }) =>
  `${c.kind} ${c.secret.slice(0, 7)}… (from ${c.source})`;

/** Where the server in use and the project in use came from, as `whoami` says. */
function sources(ctx: Context, file: SavedConfig) {
  const urlSource = ctx.flags.url
    ? "--url"
    : ctx.io.env.HERALD_URL
      ? "HERALD_URL"
      : file.url
        ? "saved login"
        : "default";
  const projectSource = ctx.flags.project
    ? "--project"
    : ctx.io.env.HERALD_PROJECT
      ? "HERALD_PROJECT"
      : "herald projects use";
  return { urlSource, projectSource };
}

/**
 * The stream device `herald listen` (and `ack`) would use: the one saved for this server and the
 * managing token's account (`accountId`: a CLI token that publishes is that token), and so said.
 */
function listensAs(ctx: Context, file: SavedConfig, accountId: string | undefined) {
  const device = ctx.owner ? deviceOf(file, { url: ctx.url, accountId }) : undefined;
  const listens = !ctx.owner
    ? "nothing: herald listen takes a CLI token (herald login)"
    : device
      ? `as device ${device.id} (saved by herald listen)`
      : "as a new device: herald listen registers this machine when first run";
  return { device, listens };
}

export const whoami: Command = {
  name: "whoami",
  summary: "show the server, credential, account and project the next command will use",
  usage: "herald whoami [--json]",
  options: {},
  example: "herald whoami --json",
  async run(ctx) {
    const publisher = ctx.publisher;
    const owner = ctx.owner;
    if (!publisher)
      throw new CliError("not logged in: run `herald login`, or set HERALD_API_KEY", exit.auth);
    const file = ctx.config.load();
    const { urlSource, projectSource } = sources(ctx, file);
    // The account is the owner's, when a CLI token is at hand; an API key shows its project only.
    const token = publisher.kind === "CLI token" ? publisher : owner;
    const account = token
      ? (
          await ctx
            .client(AccountService)
            .getAccount({}, { headers: { authorization: `Bearer ${token.secret}` } })
        ).account
      : undefined;
    const project =
      publisher.kind === "API key"
        ? "the API key's own"
        : ctx.project
          ? `${ctx.project} (from ${projectSource})`
          : `default (${account?.defaultProjectId})`;
    const { device, listens } = listensAs(ctx, file, account?.id);
    const lines = [
      `server     ${ctx.url} (${urlSource})`,
      `publishes  with ${describe(publisher)}`,
      `manages    ${owner ? `with ${describe(owner)}` : "nothing: run herald login to manage projects, keys and devices"}`,
      `account    ${account ? `${account.email} (${account.id})` : "not shown to an API key"}`,
      `project    ${project}`,
      `listens    ${listens}`,
    ];
    if (publisher.kind === "API key" && owner) {
      lines.push(`note       ${publisher.source} is used to publish, not the saved login's token`);
    }
    ctx.out(lines.join("\n"), {
      url: ctx.url,
      url_source: urlSource,
      credential: {
        kind: publisher.kind,
        prefix: `${publisher.secret.slice(0, 7)}…`,
        source: publisher.source,
      },
      owner_credential: owner
        ? { prefix: `${owner.secret.slice(0, 7)}…`, source: owner.source }
        : null,
      email: account?.email ?? null,
      account_id: account?.id ?? null,
      project:
        publisher.kind === "API key" ? null : (ctx.project ?? account?.defaultProjectId ?? null),
      listen_device_id: device ? device.id : null,
    });
    return exit.ok;
  },
};
