/** Accounts: created with their default project, found by email (case-insensitive) or id. */
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import { uuidv7 } from "../../domain/ids.ts";
import { Account } from "../entities/account.ts";
import { Project } from "../entities/project.ts";
import type { Orm } from "../orm.ts";
import { deviceChannel } from "./devices.ts";
import type { ProjectRow } from "./projects.ts";

export type AccountRow = InstanceType<typeof Account.class>;

export class AccountRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  /** Creates an account with its default project; undefined if the email is taken. */
  async create(
    email: string,
    passwordHash: string | null,
  ): Promise<{ account: AccountRow; project: ProjectRow } | undefined> {
    try {
      return await this.#orm.em.fork().transactional(async (em) => {
        const account = em.create(Account, {
          id: uuidv7(),
          email,
          passwordHash,
          plan: "free",
          createdAt: new Date(),
        });
        // The account row first: the ORM orders inserts by relations, and these are plain ids.
        await em.flush();
        const project = em.create(Project, {
          id: uuidv7(),
          accountId: account.id,
          name: "default",
          isDefault: true,
          createdAt: new Date(),
        });
        await em.flush();
        return { account, project };
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) return undefined;
      throw err;
    }
  }

  async findByEmail(email: string): Promise<AccountRow | null> {
    const rows = await this.#orm.em
      .fork()
      .find(Account, { email: { $ilike: email.replace(/[\\%_]/g, "\\$&") } }, { limit: 1 });
    return rows[0] ?? null;
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.#orm.em.fork().nativeUpdate(Account, { id }, { passwordHash });
  }

  /** The server's owner: the account of `email` (HERALD_OWNER_EMAIL), else the first account. */
  async owner(email: string): Promise<AccountRow | null> {
    return (await this.findByEmail(email)) ?? (await this.first());
  }

  /** The server's first account: the owner of a single-owner server. */
  async first(): Promise<AccountRow | null> {
    const rows = await this.#orm.em.fork().find(Account, {}, { orderBy: { id: "asc" }, limit: 1 });
    return rows[0] ?? null;
  }

  /**
   * Deletes the account and, by the schema's cascades, everything it holds (projects with their
   * keys, notifications and deliveries; devices; tokens; usage). Returns how many notifications
   * went with it. Without the pool's statement deadline (orm.ts): an account's millions of
   * deliveries, cascading in one statement, would fail it at every try, and it is the owner's
   * to finish, on one connection.
   */
  async delete(id: string): Promise<number> {
    return this.#orm.em.fork().transactional(async (em) => {
      const db = em.getConnection();
      await db.execute("set local statement_timeout = 0", [], "run", em.getTransactionContext());
      const [row] = await db.execute<{ n: string }[]>(
        `select count(*) as n from notification n join project p on p.id = n.project_id
          where p.account_id = ?`,
        [id],
        "all",
        em.getTransactionContext(),
      );
      // Its devices' open streams end when this commits (devices.ts: a signed-out device's).
      await db.execute(
        `select pg_notify(?, d.id::text) from device d
          where d.account_id = ? and d.platform = 'stream' and d.signed_out_at is null`,
        [deviceChannel, id],
        "all",
        em.getTransactionContext(),
      );
      await em.nativeDelete(Account, { id });
      return Number(row?.n ?? 0);
    });
  }

  async get(id: string): Promise<AccountRow | null> {
    return this.#orm.em.fork().findOne(Account, { id });
  }
}
