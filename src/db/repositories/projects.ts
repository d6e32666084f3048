/**
 * Projects of an account. Every read and write is scoped by account id: a project of another
 * account is simply not found.
 */
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import { uuidv7 } from "../../domain/ids.ts";
import { Project } from "../entities/project.ts";
import type { Orm } from "../orm.ts";

export type ProjectRow = InstanceType<typeof Project.class>;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class ProjectRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  async defaultOf(accountId: string): Promise<ProjectRow> {
    return this.#orm.em.fork().findOneOrFail(Project, { accountId, isDefault: true });
  }

  async list(accountId: string): Promise<ProjectRow[]> {
    return this.#orm.em
      .fork()
      .find(Project, { accountId }, { orderBy: { isDefault: "desc", name: "asc" } });
  }

  async get(accountId: string, id: string): Promise<ProjectRow | null> {
    if (!uuidPattern.test(id)) return null;
    return this.#orm.em.fork().findOne(Project, { accountId, id });
  }

  /** A project of the account by id or by name. */
  async resolve(accountId: string, idOrName: string): Promise<ProjectRow | null> {
    const em = this.#orm.em.fork();
    if (uuidPattern.test(idOrName)) return em.findOne(Project, { accountId, id: idOrName });
    return em.findOne(Project, { accountId, name: idOrName });
  }

  /** Undefined when the name is taken in the account. */
  async create(accountId: string, name: string): Promise<ProjectRow | undefined> {
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

  async rename(accountId: string, id: string, name: string): Promise<ProjectRow | null | "taken"> {
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

  /** Whether other projects' API keys may escalate into it; null when there is no such project. */
  async setAcceptsEscalations(
    accountId: string,
    id: string,
    accepts: boolean,
  ): Promise<ProjectRow | null> {
    const em = this.#orm.em.fork();
    const project = await em.findOne(Project, { accountId, id });
    if (!project) return null;
    project.acceptsEscalations = accepts;
    await em.flush();
    return project;
  }

  async delete(accountId: string, id: string): Promise<"deleted" | "missing" | "default"> {
    const em = this.#orm.em.fork();
    const project = await em.findOne(Project, { accountId, id });
    if (!project) return "missing";
    if (project.isDefault) return "default";
    await em.remove(project).flush();
    return "deleted";
  }
}
