import { Migration } from "@mikro-orm/migrations";

/**
 * Webhooks. Endpoints (secret sealed like push tokens), and an outbox: events are written by
 * statement-level triggers on `notification` and `delivery`, in the very transaction of the
 * change that caused them (a publish, a settle, a device's fetch), so a crash loses none and
 * invents none, whichever code path made the change. An event is written only when an enabled
 * endpoint of the project takes its type, with one `webhook_delivery` per such endpoint.
 * A notification's own events happen once (`unique (type, subject)`).
 */
/* The endpoints, the outbox (events and their per-endpoint deliveries) and the attempts. */
const tables = `
      create table webhook_endpoint (
        id uuid primary key,
        project_id uuid not null references project (id) on delete cascade,
        url text not null,
        event_types text[] not null,
        description text not null default '',
        secret_key_id text not null,
        secret_box bytea not null,
        previous_key_id text,
        previous_box bytea,
        previous_until timestamptz,
        enabled boolean not null default true,
        disabled_reason text not null default '',
        consecutive_failures integer not null default 0,
        created_at timestamptz not null default now()
      );
      create index webhook_endpoint_project on webhook_endpoint (project_id);

      create table webhook_event (
        id uuid primary key default gen_random_uuid(),
        project_id uuid not null references project (id) on delete cascade,
        type text not null,
        subject uuid not null,
        payload jsonb not null,
        created_at timestamptz not null default now()
      );
      create unique index webhook_event_once on webhook_event (type, subject)
        where type like 'notification.%';

      create table webhook_delivery (
        event_id uuid not null references webhook_event (id) on delete cascade,
        endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
        state text not null default 'pending',
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        locked_until timestamptz,
        primary key (event_id, endpoint_id)
      );
      create index webhook_delivery_due on webhook_delivery (next_attempt_at)
        where state = 'pending';

      create table webhook_attempt (
        id bigint generated always as identity primary key,
        event_id uuid not null,
        endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
        attempted_at timestamptz not null default now(),
        status_code integer not null,
        error text not null default '',
        duration_ms integer not null
      );
      create index webhook_attempt_endpoint on webhook_attempt (endpoint_id, id desc);

`;

/* Writes events for the endpoints that take them. */
const emit = `
      -- Writes events (rows of type, project, subject, data) for the endpoints that take them.
      create function herald_webhook_emit(events jsonb) returns void language sql as $$
        with ev as (
          insert into webhook_event (project_id, type, subject, payload)
          select (e->>'project_id')::uuid, e->>'type', (e->>'subject')::uuid,
                 jsonb_build_object('type', e->>'type',
                                    'timestamp', to_char(now() at time zone 'utc',
                                                         'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                    'data', e->'data')
            from jsonb_array_elements(events) e
           where exists (select 1 from webhook_endpoint w
                          where w.project_id = (e->>'project_id')::uuid and w.enabled
                            and e->>'type' = any(w.event_types))
          on conflict do nothing
          returning id, project_id, type
        )
        insert into webhook_delivery (event_id, endpoint_id)
        select ev.id, w.id from ev join webhook_endpoint w
            on w.project_id = ev.project_id and w.enabled and ev.type = any(w.event_types)
      $$;

`;

/* notification.created, for every insert statement. */
const created = `
      create function herald_webhook_notification_created() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from webhook_endpoint w join inserted i on i.project_id = w.project_id
                    where w.enabled and 'notification.created' = any(w.event_types)) then
          perform herald_webhook_emit(coalesce(jsonb_agg(jsonb_build_object(
            'type', 'notification.created', 'project_id', i.project_id, 'subject', i.id,
            'data', jsonb_build_object('id', i.id, 'project_id', i.project_id, 'topic', i.topic,
                                       'title', i.title, 'priority', i.priority,
                                       'status', i.status, 'created_at', i.created_at,
                                       'deliver_at', i.deliver_at))), '[]'))
            from inserted i;
        end if;
        return null;
      end $$;
      create trigger webhook_notification_created after insert on notification
        referencing new table as inserted for each statement
        execute function herald_webhook_notification_created();

`;

/* The delivery events. */
const changed = `
      -- A delivery's state changed: delivery.failed per device; notification.delivered at the
      -- first device to confirm; notification.failed / .expired when the last copy settles and
      -- none reached a device.
      create function herald_webhook_delivery_changed() returns trigger language plpgsql as $$
      begin
        if not exists (select 1 from webhook_endpoint w where w.enabled) then return null; end if;
        perform herald_webhook_emit(coalesce(jsonb_agg(x.e), '[]')) from (
          select jsonb_build_object('type', 'delivery.failed', 'project_id', n.project_id,
                   'subject', gen_random_uuid(),
                   'data', jsonb_build_object('notification_id', n.id, 'project_id', n.project_id,
                     'device_id', d.device_id, 'platform', d.platform, 'reason', d.last_error,
                     'attempts', d.attempts)) as e
            from changed d join before b using (notification_id, device_id)
            join notification n on n.id = d.notification_id
           where d.state = 'failed' and b.state <> 'failed'
          union all
          select jsonb_build_object('type', 'notification.delivered', 'project_id', n.project_id,
                   'subject', n.id,
                   'data', jsonb_build_object('id', n.id, 'project_id', n.project_id,
                     'topic', n.topic, 'title', n.title, 'device_id', min(d.device_id::text)))
            from changed d join before b using (notification_id, device_id)
            join notification n on n.id = d.notification_id
           where d.state in ('delivered', 'opened') and b.state not in ('delivered', 'opened')
           group by n.id
          union all
          select jsonb_build_object('type', case when bool_or(a.state = 'failed')
                     then 'notification.failed' else 'notification.expired' end,
                   'project_id', n.project_id, 'subject', n.id,
                   'data', jsonb_build_object('id', n.id, 'project_id', n.project_id,
                     'topic', n.topic, 'title', n.title))
            from (select distinct notification_id from changed
                   where state in ('failed', 'expired')) c
            join notification n on n.id = c.notification_id
            join delivery a on a.notification_id = n.id
           group by n.id
          having bool_and(a.state in ('failed', 'expired', 'canceled'))
             and bool_or(a.state in ('failed', 'expired'))
        ) x;
        return null;
      end $$;
      create trigger webhook_delivery_changed after update on delivery
        referencing old table as before new table as changed for each statement
        execute function herald_webhook_delivery_changed();
`;

export class Migration0011Webhooks extends Migration {
  override name = "0011-webhooks";

  up(): void {
    for (const sql of [tables, emit, created, changed]) this.addSql(sql);
  }
}
