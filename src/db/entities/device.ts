import { defineEntity, p } from "@mikro-orm/core";

/**
 * A receiving device of an account. Its credential is stored as a digest; its push token sealed
 * (`tokenKeyId` + `tokenBox`, see PushTokenKeyRing) and findable by an HMAC blind index.
 */
export const Device = defineEntity({
  name: "Device",
  tableName: "device",
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    name: p.text(),
    platform: p.text(),
    credentialDigest: p.type("blob"),
    credentialPrefix: p.text(),
    tokenKeyId: p.text().nullable(),
    tokenBox: p.type("blob").nullable(),
    tokenIndex: p.type("blob").nullable(),
    tokenLast4: p.text(),
    topics: p.array(),
    enabled: p.boolean(),
    disabledReason: p.text(),
    createdAt: p.datetime(),
    lastSeenAt: p.datetime().nullable(),
    signedOutAt: p.datetime().nullable(),
    /** Quiet hours (domain/quiet-hours.ts): all three, or none. */
    quietTz: p.text().nullable(),
    quietStart: p.integer().nullable(),
    quietEnd: p.integer().nullable(),
  },
});
