/**
 * Accounts and projects. Every read and write is scoped by account id: a project of another
 * account is simply not found.
 */
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import { Account } from "../db/entities/account.ts";
import { Project } from "../db/entities/project.ts";
import type { Orm } from "../db/orm.ts";
import { uuidv7 } from "../domain/ids.ts";

export type AccountRow = InstanceType<typeof Account.class>;
export type ProjectRow = InstanceType<typeof Project.class>;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class AccountStore {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  /** Creates an account with its default project; undefined if the email is taken. */
  async createAccount(
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

  async getAccount(id: string): Promise<AccountRow | null> {
    return this.#orm.em.fork().findOne(Account, { id });
  }

  async defaultProject(accountId: string): Promise<ProjectRow> {
    return this.#orm.em.fork().findOneOrFail(Project, { accountId, isDefault: true });
  }

  async listProjects(accountId: string): Promise<ProjectRow[]> {
    return this.#orm.em
      .fork()
      .find(Project, { accountId }, { orderBy: { isDefault: "desc", name: "asc" } });
  }

  async getProject(accountId: string, id: string): Promise<ProjectRow | null> {
    if (!uuidPattern.test(id)) return null;
    return this.#orm.em.fork().findOne(Project, { accountId, id });
  }

  /** A project of the account by id or by name. */
  async resolveProject(accountId: string, idOrName: string): Promise<ProjectRow | null> {
    const em = this.#orm.em.fork();
    if (uuidPattern.test(idOrName)) return em.findOne(Project, { accountId, id: idOrName });
    return em.findOne(Project, { accountId, name: idOrName });
  }

  /** Undefined when the name is taken in the account. */
  async createProject(accountId: string, name: string): Promise<ProjectRow | undefined> {
    const em = this.#orm.em.fork();
    const project = em.create(Project, {
      id: uuidv7(),
      accountId,
      name,
      isDefault: false,
      createdAt: new Date(),
    });
    try {
      await em.flush();
      return project;
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) return undefined;
      throw err;
    }
  }

  async renameProject(
    accountId: string,
    id: string,
    name: string,
  ): Promise<ProjectRow | null | "taken"> {
    const em = this.#orm.em.fork();
    const project = await em.findOne(Project, { accountId, id });
    if (!project) return null;
    project.name = name;
    try {
      await em.flush();
      return project;
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) return "taken";
      throw err;
    }
  }

  async deleteProject(accountId: string, id: string): Promise<"deleted" | "missing" | "default"> {
    const em = this.#orm.em.fork();
    const project = await em.findOne(Project, { accountId, id });
    if (!project) return "missing";
    if (project.isDefault) return "default";
    await em.remove(project).flush();
    return "deleted";
  }
}
