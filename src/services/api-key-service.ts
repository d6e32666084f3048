/** ApiKeyService: the owner creates, lists and revokes a project's keys. */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ApiKeyService } from "../../gen/herald/v1/api_key_service_pb.ts";
import type { ApiKeyRepository, CredentialVerifier, ProjectRepository } from "../db/index.ts";
import { heraldError } from "../errors.ts";
import { apiKeyToProto } from "./mappers.ts";
import { principalOf } from "./scope.ts";

export interface ApiKeyDeps {
  projects: ProjectRepository;
  apiKeys: ApiKeyRepository;
  credentials: CredentialVerifier;
}

export function createApiKeyService(deps: ApiKeyDeps): ServiceImpl<typeof ApiKeyService> {
  const { projects, apiKeys, credentials } = deps;
  const ownProject = async (accountId: string, projectId: string) => {
    const project = await projects.get(accountId, projectId);
    if (!project) throw heraldError("not_found", `project ${projectId} not found`);
    return project;
  };
  return {
    async createApiKey(req, ctx) {
      const project = await ownProject(principalOf(ctx).accountId, req.projectId);
      const scopes = req.scopes.length > 0 ? req.scopes : ["write"];
      const expiresAt = req.expiresAt ? timestampDate(req.expiresAt) : null;
      const { secret, key } = await apiKeys.create(project.id, req.name, scopes, expiresAt);
      return { secret, apiKey: apiKeyToProto(key) };
    },

    async listApiKeys(req, ctx) {
      const project = await ownProject(principalOf(ctx).accountId, req.projectId);
      return { apiKeys: (await apiKeys.list(project.id)).map(apiKeyToProto) };
    },

    async revokeApiKey(req, ctx) {
      const key = await apiKeys.revoke(principalOf(ctx).accountId, req.id);
      if (!key) throw heraldError("not_found", `API key ${req.id} not found`);
      credentials.forget(key.id);
      return { apiKey: apiKeyToProto(key) };
    },
  };
}
