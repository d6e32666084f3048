import { Migration } from "@mikro-orm/migrations";

/**
 * Acknowledge and escalate: a notification may ask for acknowledgement; until one comes it is
 * repeated (`next_repeat_at`) and, once, escalated (`escalate_at`). The workers find the due
 * ones through partial indexes. The acknowledgement and the escalation are events for webhooks,
 * written by a trigger in the transaction that records them.
 */
export class Migration0012Acknowledgements extends Migration {
  override name = "0012-acknowledgements";

  up(): void {
    this.addSql(`
      alter table notification
        add column require_ack boolean not null default false,
        add column repeat_every_seconds integer,
        add column escalate_after_seconds integer,
        add column escalate_topic text,
        add column escalate_project_id uuid,
        add column next_repeat_at timestamptz,
        add column repeats integer not null default 0,
        add column escalate_at timestamptz,
        add column acknowledged_at timestamptz,
        add column acknowledged_by uuid,
        add column escalated_at timestamptz,
        add column escalation_id uuid;
      create index notification_repeat_due on notification (next_repeat_at)
        where next_repeat_at is not null;
      create index notification_escalate_due on notification (escalate_at)
        where escalate_at is not null;
    `);
    // A row trigger that fires only on the change itself (`update of …` and `when`): the
    // fan-out's and the release's updates of notification rows pay nothing.
    this.addSql(`
      create function herald_webhook_notification_changed() returns trigger language plpgsql as $$
      begin
        if new.acknowledged_at is not null and old.acknowledged_at is null then
          perform herald_webhook_emit(jsonb_build_array(jsonb_build_object(
            'type', 'notification.acknowledged', 'project_id', new.project_id, 'subject', new.id,
            'data', jsonb_build_object('id', new.id, 'project_id', new.project_id,
              'topic', new.topic, 'title', new.title, 'device_id', new.acknowledged_by,
              'acknowledged_at', new.acknowledged_at, 'repeats', new.repeats))));
        end if;
        if new.escalated_at is not null and old.escalated_at is null then
          perform herald_webhook_emit(jsonb_build_array(jsonb_build_object(
            'type', 'notification.escalated', 'project_id', new.project_id, 'subject', new.id,
            'data', jsonb_build_object('id', new.id, 'project_id', new.project_id,
              'topic', new.topic, 'title', new.title, 'escalation_id', new.escalation_id,
              'escalated_at', new.escalated_at))));
        end if;
        return null;
      end $$;
      create trigger webhook_notification_changed
        after update of acknowledged_at, escalated_at on notification for each row
        when ((old.acknowledged_at is null and new.acknowledged_at is not null)
              or (old.escalated_at is null and new.escalated_at is not null))
        execute function herald_webhook_notification_changed();
    `);
  }
}
