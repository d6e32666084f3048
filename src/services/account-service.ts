/** AccountService: sign-up, the caller's account, and usage against the monthly quota. */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountService } from "../../gen/herald/v1/account_service_pb.ts";
import type { Config } from "../config.ts";
import type {
  AccountRepository,
  CliTokenRepository,
  CredentialVerifier,
  ProjectRepository,
  SetupLinkRepository,
  UsageRepository,
} from "../db/index.ts";
import type { LoginLimiter } from "../domain/login-limiter.ts";
import { monthOf } from "../domain/month.ts";
import { hashPassword } from "../domain/passwords.ts";
import { heraldError } from "../errors.ts";
import { deleteAccount } from "./account-deletion.ts";
import { accountToProto } from "./mappers.ts";
import { checkCode, confirmPassword } from "./password-auth.ts";
import { principalOf } from "./scope.ts";
import { consoleName, startSession } from "./session.ts";

/** A setup link that is unknown, used or expired, and how the operator makes a new one. */
const setupLinkGone = () =>
  heraldError(
    "unauthenticated",
    "this setup link is unknown, used or expired: the operator can print a new one with npm run owner:reset-password",
  );

export interface AccountDeps {
  accounts: AccountRepository;
  credentials: CredentialVerifier;
  cliTokens: CliTokenRepository;
  setupLinks: SetupLinkRepository;
  limiter: LoginLimiter;
  projects: ProjectRepository;
  usage: UsageRepository;
  config: Config;
}

export function createAccountService(deps: AccountDeps): ServiceImpl<typeof AccountService> {
  const { accounts, projects, usage, config, setupLinks, cliTokens, limiter } = deps;
  return {
    async signUp(req) {
      if (!config.signupEnabled) {
        throw heraldError("permission_denied", "sign-up is closed on this server");
      }
      const created = await accounts.create(req.email, await hashPassword(req.password));
      if (!created) {
        throw heraldError("already_exists", "an account with this email exists", {
          violations: [{ field: "email", message: "is already registered" }],
        });
      }
      return { account: accountToProto(created.account, created.project.id) };
    },

    async getAccount(_req, ctx) {
      const { accountId } = principalOf(ctx);
      const account = await accounts.get(accountId);
      if (!account) throw heraldError("not_found", "account not found");
      const project = await projects.defaultOf(accountId);
      const owner = await accounts.owner(config.owner.email);
      return { account: accountToProto(account, project.id, owner?.id === accountId) };
    },

    async getServerInfo() {
      return { signupOpen: config.signupEnabled, publicUrl: config.publicUrl ?? "" };
    },

    async describeSetupLink(req, ctx) {
      const link = await checkCode(
        limiter,
        ctx,
        () => setupLinks.describe(req.token),
        (l) => !l,
      );
      const account = link && (await accounts.get(link.accountId));
      if (!link || !account) {
        throw setupLinkGone();
      }
      return { email: account.email, expiresAt: timestampFromDate(link.expiresAt) };
    },

    async completeOwnerSetup(req, ctx) {
      const accountId = await setupLinks.consume(req.token);
      if (!accountId) {
        throw setupLinkGone();
      }
      await accounts.setPasswordHash(accountId, await hashPassword(req.password));
      const { secret, token } = await cliTokens.mint(
        accountId,
        consoleName(ctx),
        "session",
        null,
        "setup_link",
      );
      // A password reset (the operator printed a new link): the other sessions end with it,
      // and the CLI tokens unless kept.
      const ended = await cliTokens.revokeAfterPasswordChange(
        accountId,
        token.id,
        req.keepCliTokens,
      );
      startSession(ctx, secret);
      const account = await accounts.get(accountId);
      if (!account) throw heraldError("not_found", "account not found");
      return {
        // The setup link is the owner's (npm run owner:reset-password).
        account: accountToProto(account, (await projects.defaultOf(accountId)).id, true),
        sessionsEnded: ended.sessions,
        cliTokensRevoked: ended.cliTokens,
      };
    },

    async changePassword(req, ctx) {
      const { accountId, credentialId } = principalOf(ctx);
      const account = await accounts.get(accountId);
      if (!account) throw heraldError("not_found", "account not found");
      await confirmPassword(deps, ctx, account.email, req.currentPassword, "current_password");
      await accounts.setPasswordHash(accountId, await hashPassword(req.newPassword));
      const ended = await cliTokens.revokeAfterPasswordChange(
        accountId,
        credentialId,
        req.keepCliTokens,
      );
      return { sessionsEnded: ended.sessions, cliTokensRevoked: ended.cliTokens };
    },

    deleteAccount: (req, ctx) => deleteAccount(deps, req, ctx),

    async getUsage(_req, ctx) {
      const { accountId } = principalOf(ctx);
      const now = new Date();
      const month = monthOf(now);
      return {
        plan: "free",
        notificationsUsed: await usage.used(accountId, now),
        notificationsQuota: config.monthlyQuota,
        periodStart: timestampFromDate(month.start),
        periodEnd: timestampFromDate(month.end),
      };
    },
  };
}
