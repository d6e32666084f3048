import { defineEntity, p } from "@mikro-orm/core";

/** A pending or finished RFC 8628 device login. The device code is stored as a digest. */
export const DeviceLogin = defineEntity({
  name: "DeviceLogin",
  tableName: "device_login",
  properties: {
    id: p.uuid().primary(),
    deviceCodeDigest: p.type("blob"),
    userCode: p.text(),
    tokenName: p.text(),
    status: p.text(),
    accountId: p.uuid().nullable(),
    intervalSeconds: p.integer(),
    lastPolledAt: p.datetime().nullable(),
    expiresAt: p.datetime(),
    /** The expiry the CLI asked for its token (null: none). */
    tokenExpiresAt: p.datetime().nullable(),
    /** The client address and User-Agent that started it, shown to whoever approves it. */
    requestedFrom: p.text().default(""),
    userAgent: p.text().default(""),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
