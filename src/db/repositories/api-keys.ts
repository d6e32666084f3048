/**
 * Project API keys: minted here, the secret returned once to the caller, only its digest
 * written. (Verification, on every request, is credential-verifier.ts.)
 */

import { digestCredential, displayPrefix, mintCredential } from "../../domain/credentials.ts";
import { uuidv7 } from "../../domain/ids.ts";
import { defaultLimits } from "../../domain/limits.ts";
import { ApiKey } from "../entities/api-key.ts";
import { Project } from "../entities/project.ts";
import type { Orm } from "../orm.ts";
import { underCap } from "../policies/caps.ts";

export type ApiKeyRow = InstanceType<typeof ApiKey.class>;

export class ApiKeyRepository {
  readonly #orm: Orm;
  readonly #max: number;

  /** `max`: live keys per project (HERALD_MAX_API_KEYS). */
  constructor(orm: Orm, max = defaultLimits.apiKeysPerProject) {
    this.#orm = orm;
    this.#max = max;
  }

  async create(
    projectId: string,
    name: string,
    scopes: readonly string[],
    expiresAt: Date | null = null,
  ): Promise<{ secret: string; key: ApiKeyRow }> {
    const cap = {
      limit: "apiKeysPerProject" as const,
      value: this.#max,
      scope: projectId,
      count: `select count(*) as n from api_key where project_id = ? and revoked_at is null
                and (expires_at is null or expires_at > now())`,
      params: [projectId],
    };
    return underCap(this.#orm, cap, async (em) => {
      const secret = mintCredential("apiKey");
      const key = em.create(ApiKey, {
        id: uuidv7(),
        projectId,
        name,
        secretDigest: digestCredential(secret),
        displayPrefix: displayPrefix(secret),
        scopes: [...scopes],
        createdAt: new Date(),
        expiresAt,
      });
      await em.flush();
      return { secret, key };
    });
  }

  async list(projectId: string): Promise<ApiKeyRow[]> {
    return this.#orm.em.fork().find(ApiKey, { projectId }, { orderBy: { id: "desc" } });
  }

  /** Revokes a key of one of the account's projects; null when there is no such key. */
  async revoke(accountId: string, id: string): Promise<ApiKeyRow | null> {
    const em = this.#orm.em.fork();
    const key = await em.findOne(ApiKey, { id });
    if (!key) return null;
    const project = await em.findOne(Project, { id: key.projectId, accountId });
    if (!project) return null;
    key.revokedAt ??= new Date();
    await em.flush();
    return key;
  }
}
