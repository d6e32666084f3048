import { defineEntity, p } from "@mikro-orm/core";

/** A published notification. `metadata` is `json` (not `jsonb`) so it is returned as sent. */
export const Notification = defineEntity({
  name: "Notification",
  tableName: "notification",
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    topic: p.text(),
    title: p.text(),
    message: p.text(),
    priority: p.text(),
    clickUrl: p.text().nullable(),
    metadata: p.json<Record<string, unknown>>().columnType("json").nullable(),
    ttlSeconds: p.integer().nullable(),
    status: p.text(),
    createdAt: p.datetime(),
    expiresAt: p.datetime().nullable(),
  },
});
