/** ApiKeyService: the owner creates, lists and revokes a project's keys. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { ApiKeyService } from "../../gen/herald/v1/api_key_service_pb.ts";
import { heraldError } from "../errors.ts";
import type { AccountStore } from "../store/accounts.ts";
import type { CredentialStore } from "../store/credentials.ts";
import type { KeyStore } from "../store/keys.ts";
import { apiKeyToProto } from "./mappers.ts";
import { setRestStatus } from "./rest-status.ts";
import { principalOf } from "./scope.ts";

export function createApiKeyService(
  accounts: AccountStore,
  keys: KeyStore,
  credentials: CredentialStore,
): ServiceImpl<typeof ApiKeyService> {
  const ownProject = async (accountId: string, projectId: string) => {
    const project = await accounts.getProject(accountId, projectId);
    if (!project) throw heraldError("not_found", `project ${projectId} not found`);
    return project;
  };
  return {
    async createApiKey(req, ctx) {
      const project = await ownProject(principalOf(ctx).accountId, req.projectId);
      const scopes = req.scopes.length > 0 ? req.scopes : ["write"];
      const { secret, key } = await keys.createApiKey(project.id, req.name, scopes);
      setRestStatus(ctx, 201);
      return { secret, apiKey: apiKeyToProto(key) };
    },

    async listApiKeys(req, ctx) {
      const project = await ownProject(principalOf(ctx).accountId, req.projectId);
      return { apiKeys: (await keys.listApiKeys(project.id)).map(apiKeyToProto) };
    },

    async revokeApiKey(req, ctx) {
      const key = await keys.revokeApiKey(principalOf(ctx).accountId, req.id);
      if (!key) throw heraldError("not_found", `API key ${req.id} not found`);
      credentials.forget(key.id);
      return { apiKey: apiKeyToProto(key) };
    },
  };
}
