import { defineEntity, p } from "@mikro-orm/core";

/** An owner of projects and devices. */
export const Account = defineEntity({
  name: "Account",
  tableName: "account",
  properties: {
    id: p.uuid().primary(),
    email: p.text(),
    passwordHash: p.text().nullable(),
    plan: p.text().default("free"),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
