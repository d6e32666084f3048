/**
 * Creating, listing and revoking API keys and CLI tokens. A secret is minted here, returned
 * once to the caller, and only its digest is written.
 */

import { ApiKey } from "../db/entities/api-key.ts";
import { CliToken } from "../db/entities/cli-token.ts";
import { Project } from "../db/entities/project.ts";
import type { Orm } from "../db/orm.ts";
import { digestCredential, displayPrefix, mintCredential } from "../domain/credentials.ts";
import { uuidv7 } from "../domain/ids.ts";

export type ApiKeyRow = InstanceType<typeof ApiKey.class>;
export type CliTokenRow = InstanceType<typeof CliToken.class>;

export class KeyStore {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  async createApiKey(
    projectId: string,
    name: string,
    scopes: readonly string[],
  ): Promise<{ secret: string; key: ApiKeyRow }> {
    const em = this.#orm.em.fork();
    const secret = mintCredential("apiKey");
    const key = em.create(ApiKey, {
      id: uuidv7(),
      projectId,
      name,
      secretDigest: digestCredential(secret),
      displayPrefix: displayPrefix(secret),
      scopes: [...scopes],
      createdAt: new Date(),
    });
    await em.flush();
    return { secret, key };
  }

  async listApiKeys(projectId: string): Promise<ApiKeyRow[]> {
    return this.#orm.em.fork().find(ApiKey, { projectId }, { orderBy: { id: "desc" } });
  }

  /** Revokes a key of one of the account's projects; null when there is no such key. */
  async revokeApiKey(accountId: string, id: string): Promise<ApiKeyRow | null> {
    const em = this.#orm.em.fork();
    const key = await em.findOne(ApiKey, { id });
    if (!key) return null;
    const project = await em.findOne(Project, { id: key.projectId, accountId });
    if (!project) return null;
    key.revokedAt ??= new Date();
    await em.flush();
    return key;
  }

  async mintCliToken(
    accountId: string,
    name: string,
  ): Promise<{ secret: string; token: CliTokenRow }> {
    const em = this.#orm.em.fork();
    const secret = mintCredential("cliToken");
    const token = em.create(CliToken, {
      id: uuidv7(),
      accountId,
      name,
      secretDigest: digestCredential(secret),
      displayPrefix: displayPrefix(secret),
      createdAt: new Date(),
    });
    await em.flush();
    return { secret, token };
  }

  async listCliTokens(accountId: string): Promise<CliTokenRow[]> {
    return this.#orm.em.fork().find(CliToken, { accountId }, { orderBy: { id: "desc" } });
  }

  async revokeCliToken(accountId: string, id: string): Promise<CliTokenRow | null> {
    const em = this.#orm.em.fork();
    const token = await em.findOne(CliToken, { id, accountId });
    if (!token) return null;
    token.revokedAt ??= new Date();
    await em.flush();
    return token;
  }
}
