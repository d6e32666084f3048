/**
 * First start on an empty database: an account, its default project, an API key and a one-time
 * link to set the owner's password, so that a newcomer can publish at once and sign in. It goes through the same repositories as SignUp and
 * CreateApiKey. The key is returned to be printed once; only its digest is stored. A
 * transaction-scoped advisory lock, held while they write and commit, makes simultaneous first
 * starts bootstrap once.
 */
import type { Orm } from "../db/index.ts";
import { AccountRepository, ApiKeyRepository, SetupLinkRepository } from "../db/index.ts";
import { hashPassword } from "../domain/passwords.ts";

const bootstrapLock = 0x6865_7261; // "hera"

export interface Bootstrapped {
  apiKey: string;
  /** The token of the owner's one-time setup link; undefined when a password was given. */
  setupToken: string | undefined;
  accountId: string;
  projectId: string;
}

export interface Owner {
  email: string;
  /** Optional: lets the owner `herald login` with a password. */
  password?: string | undefined;
}

export async function bootstrapIfEmpty(orm: Orm, owner: Owner): Promise<Bootstrapped | undefined> {
  return orm.em.fork().transactional(async (em) => {
    await em.execute("select pg_advisory_xact_lock(?)", [bootstrapLock]);
    const [row] = (await em.execute("select count(*)::int as n from account")) as [{ n: number }];
    if (row.n > 0) return undefined;
    const passwordHash = owner.password ? await hashPassword(owner.password) : null;
    const created = await new AccountRepository(orm).create(owner.email, passwordHash);
    if (!created) throw new Error(`bootstrap: account ${owner.email} exists`);
    const { secret } = await new ApiKeyRepository(orm).create(created.project.id, "bootstrap", [
      "write",
      "read",
    ]);
    const setupToken = passwordHash
      ? undefined
      : await new SetupLinkRepository(orm).create(created.account.id);
    return {
      apiKey: secret,
      setupToken,
      accountId: created.account.id,
      projectId: created.project.id,
    };
  });
}
