import { defineEntity, p } from "@mikro-orm/core";

/**
 * A CLI token of an account, or a console session (`kind`). Only the SHA-256 digest of its
 * secret is stored.
 */
export const CliToken = defineEntity({
  name: "CliToken",
  tableName: "cli_token",
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    name: p.text(),
    kind: p.text().default("cli"),
    /** How it was made: password, device_login, console, setup_link ("" before 0.2.0). */
    madeBy: p.text().default(""),
    secretDigest: p.type("blob"),
    displayPrefix: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
  },
});
