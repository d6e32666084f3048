/**
 * Owner setup links: a random token shown once (in the first start's output, or by
 * `npm run owner:reset-password`), stored as its digest, usable once within 24 hours. Using one sets
 * the owner's password.
 */
import { randomBytes } from "node:crypto";
import { digestCredential } from "../../domain/credentials.ts";
import { SetupLink } from "../entities/setup-link.ts";
import type { Orm } from "../orm.ts";

/** How long a setup link works. */
export const setupLinkHours = 24;

export class SetupLinkRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  /** A new link's token for the account; earlier unused links stop working. */
  async create(accountId: string): Promise<string> {
    const em = this.#orm.em.fork();
    const token = randomBytes(24).toString("base64url");
    await em.nativeUpdate(SetupLink, { accountId, usedAt: null }, { usedAt: new Date() });
    em.create(SetupLink, {
      digest: digestCredential(token),
      accountId,
      expiresAt: new Date(Date.now() + setupLinkHours * 3600_000),
    });
    await em.flush();
    return token;
  }

  /** A usable link's account and expiry, without using it; undefined when unknown, used or expired. */
  async describe(token: string): Promise<{ accountId: string; expiresAt: Date } | undefined> {
    const link = await this.#orm.em.fork().findOne(SetupLink, {
      digest: digestCredential(token),
      usedAt: null,
      expiresAt: { $gt: new Date() },
    });
    return link ? { accountId: link.accountId, expiresAt: link.expiresAt } : undefined;
  }

  /** Uses a token up: its account, or undefined when unknown, used or expired. */
  async consume(token: string): Promise<string | undefined> {
    const em = this.#orm.em.fork();
    const digest = digestCredential(token);
    const link = await em.findOne(SetupLink, { digest });
    if (!link) return undefined;
    // Conditional, so that two tabs racing with one link cannot both use it.
    const used = await em.nativeUpdate(
      SetupLink,
      { digest, usedAt: null, expiresAt: { $gt: new Date() } },
      { usedAt: new Date() },
    );
    return used === 1 ? link.accountId : undefined;
  }
}
