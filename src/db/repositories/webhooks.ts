/**
 * Webhook endpoints of a project: registered with a signing secret sealed like push tokens
 * (AES-256-GCM under the token key ring, bound to the row), listed, deleted, enabled again,
 * rotated (the old secret keeps signing for an overlap), and their attempts and replays. Every
 * statement names the project, so one project's credential never reaches another's endpoints.
 * Raw SQL over tables the entity model does not need.
 */

import { randomBytes } from "node:crypto";
import { uuidv7 } from "../../domain/ids.ts";
import { defaultLimits } from "../../domain/limits.ts";
import type { PushTokenKeyRing } from "../../domain/push-token-crypto.ts";
import type { Orm } from "../orm.ts";
import { underCap } from "../policies/caps.ts";

export interface WebhookEndpointRow {
  id: string;
  project_id: string;
  url: string;
  event_types: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string;
  consecutive_failures: number;
  created_at: Date;
  previous_until: Date | null;
}

export interface WebhookAttemptRow {
  event_id: string;
  event_type: string;
  attempted_at: Date;
  status_code: number;
  error: string;
  duration_ms: number;
}

const columns = `id, project_id, url, event_types, description, enabled, disabled_reason,
  consecutive_failures, created_at, previous_until`;

/** A new signing secret: `whsec_` and 24 random bytes in base64 (32 characters). */
export function mintWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export class WebhookRepository {
  readonly #orm: Orm;
  readonly #keys: PushTokenKeyRing;
  readonly #max: number;

  /** `max`: endpoints per project (HERALD_MAX_WEBHOOKS). */
  constructor(orm: Orm, keys: PushTokenKeyRing, max = defaultLimits.webhooksPerProject) {
    this.#orm = orm;
    this.#keys = keys;
    this.#max = max;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  async create(
    projectId: string,
    url: string,
    eventTypes: readonly string[],
    description: string,
  ): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
    const id = uuidv7();
    const secret = mintWebhookSecret();
    const sealed = this.#keys.seal(secret, `webhook:${id}`);
    const cap = {
      limit: "webhooksPerProject" as const,
      value: this.#max,
      scope: projectId,
      count: "select count(*) as n from webhook_endpoint where project_id = ?",
      params: [projectId],
    };
    const [row] = await underCap(this.#orm, cap, (em) =>
      em.execute<WebhookEndpointRow[]>(
        `insert into webhook_endpoint (id, project_id, url, event_types, description, secret_key_id, secret_box)
         values (?, ?, ?, array(select jsonb_array_elements_text(?::jsonb)), ?, ?, ?)
         returning ${columns}`,
        [id, projectId, url, JSON.stringify(eventTypes), description, sealed.keyId, sealed.box],
      ),
    );
    return { endpoint: row as WebhookEndpointRow, secret };
  }

  async list(projectId: string): Promise<WebhookEndpointRow[]> {
    return this.#db.execute<WebhookEndpointRow[]>(
      `select ${columns} from webhook_endpoint where project_id = ? order by id desc`,
      [projectId],
    );
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const rows = await this.#db.execute<{ id: string }[]>(
      "delete from webhook_endpoint where project_id = ? and id = ? returning id",
      [projectId, id],
    );
    return rows.length === 1;
  }

  /** Enables it again: failures forgotten, its waiting events due now. */
  async enable(projectId: string, id: string): Promise<WebhookEndpointRow | undefined> {
    const [row] = await this.#db.execute<WebhookEndpointRow[]>(
      `with e as (
         update webhook_endpoint set enabled = true, disabled_reason = '', consecutive_failures = 0
          where project_id = ? and id = ? returning ${columns}
       ), due as (
         update webhook_delivery set next_attempt_at = now()
          where endpoint_id in (select id from e) and state = 'pending'
       )
       select * from e`,
      [projectId, id],
    );
    return row;
  }

  /** A new secret; the current one keeps signing until `overlapSeconds` from now. */
  async rotate(
    projectId: string,
    id: string,
    overlapSeconds: number,
  ): Promise<{ endpoint: WebhookEndpointRow; secret: string } | undefined> {
    const secret = mintWebhookSecret();
    const sealed = this.#keys.seal(secret, `webhook:${id}`);
    const [row] = await this.#db.execute<WebhookEndpointRow[]>(
      `update webhook_endpoint set previous_key_id = secret_key_id, previous_box = secret_box,
              previous_until = now() + make_interval(secs => ?),
              secret_key_id = ?, secret_box = ?
        where project_id = ? and id = ? returning ${columns}`,
      [overlapSeconds, sealed.keyId, sealed.box, projectId, id],
    );
    return row && { endpoint: row, secret };
  }

  /** The endpoint's attempts, newest first; undefined when it is not the project's. */
  async attempts(
    projectId: string,
    endpointId: string,
    limit: number,
  ): Promise<WebhookAttemptRow[] | undefined> {
    if (!(await this.#owns(projectId, endpointId))) return undefined;
    return this.#db.execute<WebhookAttemptRow[]>(
      `select a.event_id, ev.type as event_type, a.attempted_at, a.status_code, a.error, a.duration_ms
         from webhook_attempt a left join webhook_event ev on ev.id = a.event_id
        where a.endpoint_id = ? order by a.id desc limit ?`,
      [endpointId, limit],
    );
  }

  /** Queues the project's event for the project's endpoint now, with the same id. */
  async replay(projectId: string, endpointId: string, eventId: string): Promise<boolean> {
    const rows = await this.#db.execute<{ n: number }[]>(
      `insert into webhook_delivery (event_id, endpoint_id)
       select ev.id, w.id from webhook_event ev, webhook_endpoint w
        where ev.id = ? and ev.project_id = ? and w.id = ? and w.project_id = ?
       on conflict (event_id, endpoint_id) do update
         set state = 'pending', attempts = 0, next_attempt_at = now(), locked_until = null
       returning 1 as n`,
      [eventId, projectId, endpointId, projectId],
    );
    return rows.length === 1;
  }

  async #owns(projectId: string, endpointId: string): Promise<boolean> {
    const rows = await this.#db.execute(
      "select 1 from webhook_endpoint where project_id = ? and id = ?",
      [projectId, endpointId],
    );
    return rows.length === 1;
  }
}
