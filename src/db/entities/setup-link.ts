import { defineEntity, p } from "@mikro-orm/core";

/** A one-time link to set the owner's password (first start, or a reset by the operator). */
export const SetupLink = defineEntity({
  name: "SetupLink",
  tableName: "setup_link",
  properties: {
    digest: p.type("blob").primary(),
    accountId: p.uuid(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});
