/**
 * Every webhook event's `data`: the one definition of what an endpoint receives (docs/api.md,
 * "Webhooks", lists the same). Events are written by triggers, in the transaction of the change
 * they report, so each field is the SQL that reads it from the notification `n` (and, for
 * delivery events, the delivery `d`). The trigger functions are made from these at every start
 * (`webhookFunctions`, applied by db/orm.ts when they changed); migrations 0011, 0012 and 0014
 * made their first versions, which these replace.
 */
import { createHash } from "node:crypto";
import type { WebhookEventType } from "../../domain/webhook-events.ts";
import type { Db } from "../orm.ts";

const about = { id: "n.id", project_id: "n.project_id", topic: "n.topic", title: "n.title" };

export const webhookData: Record<WebhookEventType, Record<string, string>> = {
  "notification.created": {
    ...about,
    priority: "n.priority",
    status: "n.status",
    created_at: "n.created_at",
    deliver_at: "n.deliver_at",
  },
  "notification.delivered": { ...about, device_id: "min(d.device_id::text)" },
  "notification.failed": about,
  "notification.expired": about,
  "notification.acknowledged": {
    ...about,
    device_id: "n.acknowledged_by",
    acknowledged_at: "n.acknowledged_at",
    repeats: "n.repeats",
  },
  "notification.escalated": {
    ...about,
    escalation_id: "n.escalation_id",
    escalated_at: "n.escalated_at",
  },
  "notification.responded": {
    ...about,
    action_id: "n.response_action",
    text: "coalesce(n.response_text, '')",
    device_id: "n.responded_by",
    responded_at: "n.responded_at",
  },
  "delivery.failed": {
    notification_id: "n.id",
    project_id: "n.project_id",
    device_id: "d.device_id",
    platform: "d.platform",
    reason: "d.last_error",
    attempts: "d.attempts",
  },
};

/** `jsonb_build_object(…)` of an event type's data. */
function data(type: WebhookEventType): string {
  const fields = Object.entries(webhookData[type]).map(([k, sql]) => `'${k}', ${sql}`);
  return `jsonb_build_object(${fields.join(", ")})`;
}

/** One event about `subject`, for herald_webhook_emit: its type and data as SQL. */
function eventSql(type: string, data: string, subject: string): string {
  return `jsonb_build_object('type', ${type}, 'project_id', n.project_id, 'subject', ${subject}, 'data', ${data})`;
}

/** One event of `type` about `subject` (SQL). */
const event = (type: WebhookEventType, subject: string) =>
  eventSql(`'${type}'`, data(type), subject);

/** A row trigger's function: emits `type` when `when` holds of the changed row. */
function rowEvents(name: string, events: { when: string; type: WebhookEventType }[]): string {
  const body = events
    .map(
      (e) => `if ${e.when} then
          perform herald_webhook_emit(jsonb_build_array(${event(e.type, "n.id")}))
             from (select new.*) n;
        end if;`,
    )
    .join("\n        ");
  return `create or replace function ${name}() returns trigger language plpgsql as $$
      begin
        ${body}
        return null;
      end $$`;
}

const created = `create or replace function herald_webhook_notification_created()
      returns trigger language plpgsql as $$
      begin
        if exists (select 1 from webhook_endpoint w join inserted i on i.project_id = w.project_id
                    where w.enabled and 'notification.created' = any(w.event_types)) then
          perform herald_webhook_emit(coalesce(jsonb_agg(${event("notification.created", "n.id")}), '[]'))
            from inserted n;
        end if;
        return null;
      end $$`;

/** delivery.failed per device; notification.delivered at the first device to confirm;
 * notification.failed / .expired when the last copy settles and none reached a device. */
const deliveryChanged = `create or replace function herald_webhook_delivery_changed()
      returns trigger language plpgsql as $$
      begin
        if not exists (select 1 from webhook_endpoint w where w.enabled) then return null; end if;
        perform herald_webhook_emit(coalesce(jsonb_agg(x.e), '[]')) from (
          select ${event("delivery.failed", "gen_random_uuid()")} as e
            from changed d join before b using (notification_id, device_id)
            join notification n on n.id = d.notification_id
           where d.state = 'failed' and b.state <> 'failed'
          union all
          select ${event("notification.delivered", "n.id")}
            from changed d join before b using (notification_id, device_id)
            join notification n on n.id = d.notification_id
           where d.state in ('delivered', 'opened') and b.state not in ('delivered', 'opened')
           group by n.id
          union all
          select ${eventSql(
            "case when bool_or(a.state = 'failed') then 'notification.failed' else 'notification.expired' end",
            data("notification.failed"),
            "n.id",
          )}
            from (select distinct notification_id from changed
                   where state in ('failed', 'expired')) c
            join notification n on n.id = c.notification_id
            join delivery a on a.notification_id = n.id
           group by n.id
          having bool_and(a.state in ('failed', 'expired', 'canceled'))
             and bool_or(a.state in ('failed', 'expired'))
        ) x;
        return null;
      end $$`;

/** Every trigger function of the webhook events, as `create or replace` statements. */
export const webhookFunctions: string[] = [
  created,
  deliveryChanged,
  rowEvents("herald_webhook_notification_changed", [
    {
      when: "new.acknowledged_at is not null and old.acknowledged_at is null",
      type: "notification.acknowledged",
    },
    {
      when: "new.escalated_at is not null and old.escalated_at is null",
      type: "notification.escalated",
    },
  ]),
  rowEvents("herald_webhook_notification_responded", [
    { when: "true", type: "notification.responded" },
  ]),
];

/** Names this set of definitions: kept as a comment on the functions, so a start that finds it
 * there changes nothing. */
const version = createHash("sha256").update(webhookFunctions.join("\n")).digest("hex").slice(0, 16);

/**
 * Makes the trigger functions these definitions: once per change, under an advisory lock, so
 * that processes starting together do not replace them at once. After the migrations.
 */
export async function applyWebhookFunctions(db: Db): Promise<void> {
  const marker = `herald_webhook_delivery_changed()`;
  const rows = await db.execute<{ v: string | null }[]>(
    `select obj_description('${marker}'::regprocedure, 'pg_proc') as v`,
  );
  if (rows[0]?.v === version) return;
  await db.execute(
    `begin;
     select pg_advisory_xact_lock(hashtext('herald_webhook_functions'));
     ${webhookFunctions.join(";\n")};
     comment on function ${marker} is '${version}';
     commit;`,
  );
}
