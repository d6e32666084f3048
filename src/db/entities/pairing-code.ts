import { defineEntity, p } from "@mikro-orm/core";

/** A one-time code that signs a new device into the account that created it (10 minutes). */
export const PairingCode = defineEntity({
  name: "PairingCode",
  tableName: "pairing_code",
  properties: {
    code: p.text().primary(),
    accountId: p.uuid(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});
