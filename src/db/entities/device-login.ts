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
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
