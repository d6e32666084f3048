/**
 * AuthService: password login, the RFC 8628 device flow, logout and the account's CLI tokens.
 */
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AuthService } from "../../gen/herald/v1/auth_service_pb.ts";
import type { Config } from "../config.ts";
import type {
  AccountRepository,
  CliTokenRepository,
  CredentialVerifier,
  DeviceLoginRepository,
} from "../db/index.ts";
import type { LoginLimiter } from "../domain/login-limiter.ts";
import { formatUserCode } from "../domain/user-codes.ts";
import { heraldError } from "../errors.ts";
import { callKey, clientAddressKey } from "./context.ts";
import { cliTokenToProto } from "./mappers.ts";
import { authenticatePassword, checkCode } from "./password-auth.ts";
import { principalOf, publicBase } from "./scope.ts";
import { consoleName, endSession, startSession } from "./session.ts";

/** RFC 8628: how long codes live and the minimum poll interval. */
const deviceLoginSeconds = 600;
const pollIntervalSeconds = 5;

export interface AuthDeps {
  accounts: AccountRepository;
  cliTokens: CliTokenRepository;
  deviceLogins: DeviceLoginRepository;
  credentials: CredentialVerifier;
  limiter: LoginLimiter;
  config: Config;
}

export function createAuthService(deps: AuthDeps): ServiceImpl<typeof AuthService> {
  const { accounts, cliTokens, deviceLogins, credentials, limiter, config } = deps;
  const tokenName = (name: string) => name || "herald CLI";
  return {
    async login(req, ctx) {
      const account = await authenticatePassword(
        { accounts, limiter },
        ctx,
        req.email,
        req.password,
      );
      const { secret, token } = await cliTokens.mint(
        account.id,
        tokenName(req.tokenName),
        "cli",
        req.expiresAt ? timestampDate(req.expiresAt) : null,
        "password",
      );
      return { token: secret, cliToken: cliTokenToProto(token, token.id) };
    },

    async startLogin(req, ctx) {
      const { deviceCode, login } = await deviceLogins.start(
        tokenName(req.tokenName),
        deviceLoginSeconds,
        pollIntervalSeconds,
        req.expiresAt ? timestampDate(req.expiresAt) : null,
        {
          address: ctx.values.get(clientAddressKey),
          userAgent: ctx.values.get(callKey).userAgent,
        },
      );
      const base = publicBase(ctx, config.publicUrl);
      const userCode = formatUserCode(login.userCode);
      return {
        deviceCode,
        userCode,
        verificationUri: `${base}/device`,
        verificationUriComplete: `${base}/device?user_code=${userCode}`,
        expiresIn: deviceLoginSeconds,
        interval: pollIntervalSeconds,
      };
    },

    async pollLogin(req, ctx) {
      const poll = () =>
        deviceLogins.poll(req.deviceCode, async (accountId, name, expires) => {
          const { secret } = await cliTokens.mint(accountId, name, "cli", expires, "device_login");
          return secret;
        });
      const result = await checkCode(limiter, ctx, poll, (r) => r.unknown === true);
      return { status: result.status, token: result.token ?? "", interval: result.interval };
    },

    async getPendingLogin(req, ctx) {
      const find = () => deviceLogins.pending(req.userCode);
      const login = await checkCode(limiter, ctx, find, (l) => !l);
      if (!login) throw heraldError("not_found", "no pending login with this code");
      return {
        tokenName: login.tokenName,
        requestedFrom: login.requestedFrom,
        userAgent: login.userAgent,
        createdAt: timestampFromDate(login.createdAt),
        expiresAt: timestampFromDate(login.expiresAt),
        ...(login.tokenExpiresAt && { tokenExpiresAt: timestampFromDate(login.tokenExpiresAt) }),
      };
    },

    async approveLogin(req, ctx) {
      const decide = () => deviceLogins.decide(req.userCode, principalOf(ctx).accountId, true);
      const login = await checkCode(limiter, ctx, decide, (l) => !l);
      if (!login) throw heraldError("not_found", "no pending login with this code");
      return { tokenName: login.tokenName };
    },

    async denyLogin(req, ctx) {
      const decide = () => deviceLogins.decide(req.userCode, principalOf(ctx).accountId, false);
      const login = await checkCode(limiter, ctx, decide, (l) => !l);
      if (!login) throw heraldError("not_found", "no pending login with this code");
      return {};
    },

    async logout(_req, ctx) {
      const { accountId, credentialId } = principalOf(ctx);
      await cliTokens.revoke(accountId, credentialId);
      credentials.forget(credentialId);
      return {};
    },

    async listCliTokens(_req, ctx) {
      const { accountId, credentialId } = principalOf(ctx);
      const tokens = await cliTokens.list(accountId);
      return { cliTokens: tokens.map((t) => cliTokenToProto(t, credentialId)) };
    },

    async startSession(req, ctx) {
      const account = await authenticatePassword(
        { accounts, limiter },
        ctx,
        req.email,
        req.password,
      );
      const { secret, token } = await cliTokens.mint(
        account.id,
        consoleName(ctx),
        "session",
        null,
        "console",
      );
      startSession(ctx, secret);
      return { session: cliTokenToProto(token, token.id) };
    },

    async endSession(_req, ctx) {
      const { accountId, credentialId } = principalOf(ctx);
      await cliTokens.revoke(accountId, credentialId);
      credentials.forget(credentialId);
      endSession(ctx);
      return {};
    },

    async revokeCliToken(req, ctx) {
      const { accountId, credentialId } = principalOf(ctx);
      const token = await cliTokens.revoke(accountId, req.id);
      if (!token) throw heraldError("not_found", `CLI token ${req.id} not found`);
      credentials.forget(token.id);
      return { cliToken: cliTokenToProto(token, credentialId) };
    },
  };
}
