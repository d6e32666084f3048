import { defineEntity, p } from "@mikro-orm/core";

/** A project API key. The secret itself is never stored, only its SHA-256 digest. */
export const ApiKey = defineEntity({
  name: "ApiKey",
  tableName: "api_key",
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    name: p.text(),
    secretDigest: p.type("blob"),
    displayPrefix: p.text(),
    scopes: p.array(),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
  },
});
