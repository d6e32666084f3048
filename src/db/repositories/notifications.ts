/**
 * Notifications: publishing (the statement itself is in queue/publish.ts) and reading history.
 * Raw SQL throughout, by the ORM rule: this is the delivery path's table, written set-wise by
 * the queue, and `metadata` is `json` text returned exactly as stored.
 */

import type { NotificationRecord } from "../../domain/notification.ts";
import { enqueueDirect } from "../deliveries/enqueue-direct.ts";
import { jsonIds } from "../json-ids.ts";
import { notificationSelect } from "../notifications/codec.ts";
import type { GroupCommitter } from "../notifications/group-commit.ts";
import {
  type IdempotencyClaim,
  lookupClaim,
  type PublishResult,
  publish,
} from "../notifications/publish.ts";
import type { Orm } from "../orm.ts";

export type { IdempotencyClaim, PublishResult };

/** Raw rows carry timestamps as strings and json as text or objects: normalise them. */
function toRow(r: Record<string, unknown>): NotificationRecord {
  const row = r as unknown as NotificationRecord;
  return {
    ...row,
    metadata: typeof r.metadata === "string" ? JSON.parse(r.metadata) : row.metadata,
    created_at: new Date(r.created_at as string),
    expires_at: r.expires_at === null ? null : new Date(r.expires_at as string),
    deliver_at: r.deliver_at == null ? null : new Date(r.deliver_at as string),
    acknowledged_at: r.acknowledged_at == null ? null : new Date(r.acknowledged_at as string),
    escalated_at: r.escalated_at == null ? null : new Date(r.escalated_at as string),
    actions: typeof r.actions === "string" ? JSON.parse(r.actions) : (row.actions ?? null),
    responded_at: r.responded_at == null ? null : new Date(r.responded_at as string),
  };
}

export class NotificationRepository {
  readonly #orm: Orm;
  readonly #committer: GroupCommitter | undefined;

  /** With a committer, publishes are group-committed (queue/group-commit.ts). */
  constructor(orm: Orm, committer?: GroupCommitter) {
    this.#orm = orm;
    this.#committer = committer;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  /** Publishes waiting for a group commit's slot (0 when each commits alone). */
  get waiting(): number {
    return this.#committer?.waiting ?? 0;
  }

  publish(n: NotificationRecord, claim?: IdempotencyClaim): Promise<PublishResult> {
    return this.#committer ? this.#committer.publish(n, claim) : publish(this.#orm, n, claim);
  }

  /** A notification for one device only (a test), committed with its delivery. */
  enqueueDirect(
    notification: NotificationRecord,
    device: { id: string; platform: string },
  ): Promise<void> {
    return enqueueDirect(this.#orm, notification, device);
  }

  /** The replay (or mismatch) an earlier request with this key gives, if the key is in use. */
  /** The project's notifications scheduled and not yet due (capped per project). */
  async scheduledCount(projectId: string): Promise<number> {
    const [row] = await this.#db.execute<{ n: string }[]>(
      "select count(*) as n from notification where project_id = ? and status = 'scheduled'",
      [projectId],
    );
    return Number(row?.n ?? 0);
  }

  lookupClaim(projectId: string, key: string, fingerprint: Buffer) {
    return lookupClaim(this.#db, projectId, key, fingerprint);
  }

  async get(projectId: string, id: string): Promise<NotificationRecord | undefined> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${notificationSelect} from notification where project_id = ? and id = ?`,
      [projectId, id],
    );
    return rows[0] && toRow(rows[0]);
  }

  /** A notification by id alone: for the device inbox, whose access is checked by delivery. */
  async byId(id: string): Promise<NotificationRecord | undefined> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${notificationSelect} from notification where id = ?`,
      [id],
    );
    return rows[0] && toRow(rows[0]);
  }

  /** The notification a later one with a replace key replaces: the project's last before it. */
  async replacedBy(row: NotificationRecord): Promise<string | undefined> {
    if (row.replace_key === null) return undefined;
    const [found] = await this.#db.execute<{ id: string }[]>(
      `select id from notification where project_id = ? and replace_key = ? and id < ?
        order by id desc limit 1`,
      [row.project_id, row.replace_key, row.id],
    );
    return found?.id;
  }

  /** Several notifications by id (device inbox), in id order. */
  async byIds(ids: readonly string[]): Promise<NotificationRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${notificationSelect} from notification where id in ${jsonIds} order by id`,
      [JSON.stringify(ids)],
    );
    return rows.map(toRow);
  }

  /** Newest first; `beforeId` continues after the last row of the previous page. */
  async list(
    projectId: string,
    opts: { topic?: string; beforeId?: string; limit: number },
  ): Promise<NotificationRecord[]> {
    const where = ["project_id = ?"];
    const params: unknown[] = [projectId];
    if (opts.topic) {
      where.push("topic = ?");
      params.push(opts.topic);
    }
    if (opts.beforeId) {
      where.push("id < ?");
      params.push(opts.beforeId);
    }
    params.push(opts.limit);
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${notificationSelect} from notification where ${where.join(" and ")} order by id desc limit ?`,
      params,
    );
    return rows.map(toRow);
  }
}
