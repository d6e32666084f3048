/**
 * Notifications and idempotency records. Publishing is one SQL statement, so a 202 is sent only
 * after one commit that holds both the notification and its idempotency record, and a crash at
 * any point leaves either both or neither.
 */
import type { Orm } from "../db/orm.ts";

/** A notification row as stored. */
export interface NotificationRow {
  id: string;
  project_id: string;
  topic: string;
  title: string;
  message: string;
  priority: string;
  click_url: string | null;
  metadata: Record<string, unknown> | null;
  ttl_seconds: number | null;
  status: string;
  created_at: Date;
  expires_at: Date | null;
}

export interface IdempotencyClaim {
  key: string;
  fingerprint: Buffer;
  /** The response to replay, byte for byte, when the key is used again. */
  response: Uint8Array;
  ttlSeconds: number;
}

export type PublishResult =
  | { kind: "created" }
  | { kind: "replay"; response: Buffer }
  | { kind: "mismatch" }
  /** Another request holding the key did not commit within lock_timeout. */
  | { kind: "busy" };

/** PostgreSQL's lock_not_available, however the driver or the ORM wrapped it. */
function isLockTimeout(err: unknown): boolean {
  const e = err as { code?: string; name?: string; cause?: { code?: string } } | undefined;
  return (
    e?.code === "55P03" || e?.cause?.code === "55P03" || e?.name === "LockWaitTimeoutException"
  );
}

const columns =
  "id, project_id, topic, title, message, priority, click_url, metadata, ttl_seconds, status, created_at, expires_at";

function values(n: NotificationRow): unknown[] {
  return [
    n.id,
    n.project_id,
    n.topic,
    n.title,
    n.message,
    n.priority,
    n.click_url,
    n.metadata === null ? null : JSON.stringify(n.metadata),
    n.ttl_seconds,
    n.status,
    n.created_at,
    n.expires_at,
  ];
}

const insertPlain = `insert into notification (${columns}) values (?, ?, ?, ?, ?, ?, ?, ?::json, ?, ?, ?, ?)`;

/*
 * Claims the key and inserts the notification in one statement. A concurrent request holding the
 * same key makes this one wait on the unique index until it commits (or until lock_timeout); an
 * expired record is taken over. When the claim fails, nothing is inserted.
 */
const insertIdempotent = `
  with claim as (
    insert into idempotency_record as r
      (project_id, key, fingerprint, notification_id, response, created_at, expires_at)
    values (?::uuid, ?, ?, ?::uuid, ?, ?::timestamptz, ?::timestamptz + make_interval(secs => ?))
    on conflict (project_id, key) do update
      set fingerprint = excluded.fingerprint, notification_id = excluded.notification_id,
          response = excluded.response, created_at = excluded.created_at,
          expires_at = excluded.expires_at
      where r.expires_at <= now()
    returning 1
  )
  insert into notification (${columns})
  select ?::uuid, ?::uuid, ?, ?, ?, ?, ?, ?::json, ?::int, ?, ?::timestamptz, ?::timestamptz
  where exists (select 1 from claim)`;

/** Raw rows carry timestamps as strings and json as text or objects: normalise them. */
function toRow(r: Record<string, unknown>): NotificationRow {
  const row = r as unknown as NotificationRow;
  return {
    ...row,
    metadata: typeof r.metadata === "string" ? JSON.parse(r.metadata) : row.metadata,
    created_at: new Date(r.created_at as string),
    expires_at: r.expires_at === null ? null : new Date(r.expires_at as string),
  };
}

export class NotificationStore {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  async publish(n: NotificationRow, claim?: IdempotencyClaim): Promise<PublishResult> {
    if (!claim) {
      await this.#db.execute(insertPlain, values(n), "run");
      return { kind: "created" };
    }
    // Two rounds at most: the record we collided with can expire and be purged in between.
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await this.#db
        .execute<{ affectedRows: number }>(
          insertIdempotent,
          [
            n.project_id,
            claim.key,
            claim.fingerprint,
            n.id,
            Buffer.from(claim.response),
            n.created_at,
            n.created_at,
            claim.ttlSeconds,
            ...values(n),
          ],
          "run",
        )
        .catch((err: unknown) => {
          if (isLockTimeout(err)) return "busy" as const;
          throw err;
        });
      if (res === "busy") return { kind: "busy" };
      if (res.affectedRows === 1) return { kind: "created" };
      const earlier = await this.lookup(n.project_id, claim.key, claim.fingerprint);
      if (earlier) return earlier;
    }
    throw new Error("idempotency record vanished twice");
  }

  /** What an earlier request with this key says about this one, if the key is in use. */
  async lookup(
    projectId: string,
    key: string,
    fingerprint: Buffer,
  ): Promise<Extract<PublishResult, { kind: "replay" | "mismatch" }> | undefined> {
    const rows = await this.#db.execute<{ fingerprint: Buffer; response: Buffer }[]>(
      `select fingerprint, response from idempotency_record
        where project_id = ? and key = ? and expires_at > now()`,
      [projectId, key],
    );
    const record = rows[0];
    if (!record) return undefined;
    return record.fingerprint.equals(fingerprint)
      ? { kind: "replay", response: record.response }
      : { kind: "mismatch" };
  }

  async get(projectId: string, id: string): Promise<NotificationRow | undefined> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${columns} from notification where project_id = ? and id = ?`,
      [projectId, id],
    );
    return rows[0] && toRow(rows[0]);
  }

  /** A notification by id alone: for the device inbox, whose access is checked by delivery. */
  async byId(id: string): Promise<NotificationRow | undefined> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${columns} from notification where id = ?`,
      [id],
    );
    return rows[0] && toRow(rows[0]);
  }

  /** Several notifications by id (device inbox), in id order. */
  async byIds(ids: readonly string[]): Promise<NotificationRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${columns} from notification
        where id in (select (json_array_elements_text(?::json))::uuid) order by id`,
      [JSON.stringify(ids)],
    );
    return rows.map(toRow);
  }

  /** Newest first; `beforeId` continues after the last row of the previous page. */
  async list(
    projectId: string,
    opts: { topic?: string; beforeId?: string; limit: number },
  ): Promise<NotificationRow[]> {
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
      `select ${columns} from notification where ${where.join(" and ")} order by id desc limit ?`,
      params,
    );
    return rows.map(toRow);
  }
}
