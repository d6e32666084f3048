import { Migration } from "@mikro-orm/migrations";

/**
 * Actions and answers: a notification may carry up to 3 buttons (`actions`, as published); the
 * first answer, on any device, is recorded with the device and time. The answer is an event for
 * webhooks (`notification.responded`), written by a trigger in the transaction that records it.
 */
export class Migration0014Responses extends Migration {
  override name = "0014-responses";

  up(): void {
    this.addSql(`
      alter table notification
        add column actions json,
        add column responded_at timestamptz,
        add column responded_by uuid,
        add column response_action text,
        add column response_text text;
    `);
    this.addSql(`
      create function herald_webhook_notification_responded() returns trigger language plpgsql as $$
      begin
        perform herald_webhook_emit(jsonb_build_array(jsonb_build_object(
          'type', 'notification.responded', 'project_id', new.project_id, 'subject', new.id,
          'data', jsonb_build_object('id', new.id, 'project_id', new.project_id,
            'topic', new.topic, 'title', new.title, 'action_id', new.response_action,
            'text', coalesce(new.response_text, ''), 'device_id', new.responded_by,
            'responded_at', new.responded_at))));
        return null;
      end $$;
      create trigger webhook_notification_responded
        after update of responded_at on notification for each row
        when (old.responded_at is null and new.responded_at is not null)
        execute function herald_webhook_notification_responded();
    `);
  }
}
