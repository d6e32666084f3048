/**
 * CLI tokens: an account's credentials for the CLI and SDK, minted by a password login or an
 * approved device login. The secret is returned once; only its digest is written.
 */

import { digestCredential, displayPrefix, mintCredential } from "../../domain/credentials.ts";
import { uuidv7 } from "../../domain/ids.ts";
import { defaultLimits } from "../../domain/limits.ts";
import { CliToken } from "../entities/cli-token.ts";
import type { Orm } from "../orm.ts";
import { underCap } from "../policies/caps.ts";

export type CliTokenRow = InstanceType<typeof CliToken.class>;

export class CliTokenRepository {
  readonly #orm: Orm;
  readonly #max: number;

  /** `max`: live CLI tokens per account (HERALD_MAX_CLI_TOKENS). */
  constructor(orm: Orm, max = defaultLimits.cliTokensPerAccount) {
    this.#orm = orm;
    this.#max = max;
  }

  /** A new token; `session` for a signed-in console (its secret goes in a cookie). */
  async mint(
    accountId: string,
    name: string,
    kind: "cli" | "session" = "cli",
    expiresAt: Date | null = null,
    madeBy: "password" | "device_login" | "console" | "setup_link" | "" = "",
  ): Promise<{ secret: string; token: CliTokenRow }> {
    // Console sessions end on their own (their max age); CLI tokens are capped per account.
    const cap = {
      limit: "cliTokensPerAccount" as const,
      value: kind === "cli" ? this.#max : Number.MAX_SAFE_INTEGER,
      scope: accountId,
      count: `select count(*) as n from cli_token where account_id = ? and kind = 'cli'
                and revoked_at is null and (expires_at is null or expires_at > now())`,
      params: [accountId],
    };
    return underCap(this.#orm, cap, async (em) => {
      const secret = mintCredential("cliToken");
      const token = em.create(CliToken, {
        id: uuidv7(),
        accountId,
        name,
        kind,
        madeBy,
        secretDigest: digestCredential(secret),
        displayPrefix: displayPrefix(secret),
        createdAt: new Date(),
        expiresAt,
      });
      await em.flush();
      return { secret, token };
    });
  }

  async list(accountId: string): Promise<CliTokenRow[]> {
    return this.#orm.em.fork().find(CliToken, { accountId }, { orderBy: { id: "desc" } });
  }

  /** Revokes the account's console sessions but `keepId`; how many. */
  async revokeSessions(accountId: string, keepId: string): Promise<number> {
    return this.#revoke(accountId, keepId, "session");
  }

  /**
   * After a password change or reset: the account's other console sessions, and its CLI tokens
   * unless kept, are revoked (never `keepId`, the caller's own); how many of each.
   */
  async revokeAfterPasswordChange(accountId: string, keepId: string, keepCliTokens: boolean) {
    const sessions = await this.#revoke(accountId, keepId, "session");
    const cliTokens = keepCliTokens ? 0 : await this.#revoke(accountId, keepId, "cli");
    return { sessions, cliTokens };
  }

  #revoke(accountId: string, keepId: string, kind: "session" | "cli"): Promise<number> {
    return this.#orm.em
      .fork()
      .nativeUpdate(
        CliToken,
        { accountId, kind, revokedAt: null, id: { $ne: keepId } },
        { revokedAt: new Date() },
      );
  }

  async revoke(accountId: string, id: string): Promise<CliTokenRow | null> {
    const em = this.#orm.em.fork();
    const token = await em.findOne(CliToken, { id, accountId });
    if (!token) return null;
    token.revokedAt ??= new Date();
    await em.flush();
    return token;
  }
}
