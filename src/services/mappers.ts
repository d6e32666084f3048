/** API forms of stored accounts, projects and credentials. Secrets never pass through here. */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Account, AccountSchema } from "../../gen/herald/v1/account_pb.ts";
import {
  type ApiKey,
  ApiKeySchema,
  type CliToken,
  CliTokenSchema,
} from "../../gen/herald/v1/credential_pb.ts";
import { type Project, ProjectSchema } from "../../gen/herald/v1/project_pb.ts";
import type { AccountRow, ProjectRow } from "../store/accounts.ts";
import type { ApiKeyRow, CliTokenRow } from "../store/keys.ts";

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(new Date(d)) : undefined);

export function accountToProto(a: AccountRow, defaultProjectId: string): Account {
  return create(AccountSchema, {
    id: a.id,
    email: a.email,
    plan: a.plan,
    defaultProjectId,
    createdAt: ts(a.createdAt),
  });
}

export function projectToProto(p: ProjectRow): Project {
  return create(ProjectSchema, {
    id: p.id,
    name: p.name,
    isDefault: p.isDefault,
    createdAt: ts(p.createdAt),
  });
}

export function apiKeyToProto(k: ApiKeyRow): ApiKey {
  return create(ApiKeySchema, {
    id: k.id,
    projectId: k.projectId,
    name: k.name,
    displayPrefix: k.displayPrefix,
    scopes: [...k.scopes],
    createdAt: ts(k.createdAt),
    lastUsedAt: ts(k.lastUsedAt),
    revokedAt: ts(k.revokedAt),
  });
}

export function cliTokenToProto(t: CliTokenRow, currentId?: string): CliToken {
  return create(CliTokenSchema, {
    id: t.id,
    name: t.name,
    displayPrefix: t.displayPrefix,
    createdAt: ts(t.createdAt),
    lastUsedAt: ts(t.lastUsedAt),
    revokedAt: ts(t.revokedAt),
    current: t.id === currentId,
  });
}
