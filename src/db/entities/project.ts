import { defineEntity, p } from "@mikro-orm/core";

/** A project of an account: keys, topics and notifications live in one. */
export const Project = defineEntity({
  name: "Project",
  tableName: "project",
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    name: p.text(),
    isDefault: p.boolean().default(false),
    acceptsEscalations: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
