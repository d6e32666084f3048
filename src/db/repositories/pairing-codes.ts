/** Pairing codes: a signed-in owner creates one; a new device uses it up to sign in (10 min). */
import { mintUserCode, normalizeUserCode } from "../../domain/user-codes.ts";
import { PairingCode } from "../entities/pairing-code.ts";
import type { Orm } from "../orm.ts";

/** How long a pairing code can be used. */
export const pairingSeconds = 600;

export class PairingCodeRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  async create(accountId: string): Promise<{ code: string; expiresAt: Date }> {
    const em = this.#orm.em.fork();
    const code = mintUserCode();
    const expiresAt = new Date(Date.now() + pairingSeconds * 1000);
    em.create(PairingCode, { code, accountId, expiresAt });
    await em.flush();
    return { code, expiresAt };
  }

  /** Uses a code up; its account, or undefined when unknown, used or expired. */
  async consume(typed: string): Promise<string | undefined> {
    const em = this.#orm.em.fork();
    const code = normalizeUserCode(typed);
    const pairing = await em.findOne(PairingCode, { code });
    if (!pairing) return undefined;
    // Conditional, so that two devices racing for one code cannot both use it.
    const used = await em.nativeUpdate(
      PairingCode,
      { code, usedAt: null, expiresAt: { $gt: new Date() } },
      { usedAt: new Date() },
    );
    return used === 1 ? pairing.accountId : undefined;
  }
}
