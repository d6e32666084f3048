/**
 * The publish statement of one publish at a time (HERALD_GROUP_COMMIT=0, a key another request
 * holds, a batch retried one by one): the notification row (status `queued`, the workers'
 * fan-out's work item; group-commit.ts fans small publishes out in their own commit) and,
 * with an Idempotency-Key, its claim, in one statement and one commit. A 202 is sent only after
 * that commit, and a crash at any point leaves both or neither. Raw SQL: the claim and the
 * insert are one `INSERT … ON CONFLICT` feeding an `INSERT … WHERE EXISTS`.
 */
import type { NotificationRecord } from "../../domain/notification.ts";
import { hasSqlState } from "../errors.ts";
import type { Db, Orm } from "../orm.ts";
import {
  insertNotification,
  notificationColumns,
  notificationValues,
  placeholders,
} from "./codec.ts";
import { claimRecord, keyLock } from "./idempotency-claim.ts";

export interface IdempotencyClaim {
  key: string;
  fingerprint: Buffer;
  /** The response to replay, byte for byte, when the key is used again. */
  response: Uint8Array;
  ttlSeconds: number;
  /** How long to wait for a concurrent request holding the key to commit. */
  waitMs: number;
}

export type PublishResult =
  /** `forWorker`: its fan-out, or push deliveries its commit made, wait for a worker. */
  | { kind: "created"; forWorker: boolean }
  | { kind: "replay"; response: Buffer }
  | { kind: "mismatch" }
  /** Another request holding the key did not commit within the wait. */
  | { kind: "busy" };

/*
 * Claims the key and inserts the notification in one statement. A concurrent request holding the
 * same key makes this one wait, on the key's advisory lock (which group-commit.ts's batches try
 * without waiting) or the unique index, until it commits, or until the statement's own
 * lock_timeout: `set_config(…, true)` is local to the statement's transaction, and the claim reads
 * it first, so the setting is in force before the claim can wait, and gone after. An expired
 * record is taken over. When the claim fails, nothing is inserted.
 */
const insertIdempotent = `
  with wait as materialized (
    select set_config('lock_timeout', ?, true) as lock_timeout
  ), locked as materialized (
    select pg_advisory_xact_lock(${keyLock("?", "?")}) from wait
  ), claim as (${claimRecord(
    `select ?::uuid, ?, ?, ?::uuid, ?, ?::timestamptz, ?::timestamptz + make_interval(secs => ?)
      from locked`,
    "1",
  )}
  )
  insert into notification (${notificationColumns})
  select ${placeholders}
  where exists (select 1 from claim)`;

/** PostgreSQL's lock_not_available, however the driver or the ORM wrapped it. */
function isLockTimeout(err: unknown): boolean {
  return (
    hasSqlState(err, "55P03") ||
    (err as { name?: string } | undefined)?.name === "LockWaitTimeoutException"
  );
}

/** Inserts the notification; with a claim, only if the key is free (or its record expired). */
export async function publish(
  orm: Orm,
  n: NotificationRecord,
  claim?: IdempotencyClaim,
): Promise<PublishResult> {
  if (!claim) {
    await orm.em.getConnection().execute(insertNotification, notificationValues(n), "run");
    return { kind: "created", forWorker: true };
  }
  // Two rounds at most: the record we collided with can expire and be purged in between.
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await claimAndInsert(orm, n, claim).catch((err: unknown) => {
      if (isLockTimeout(err)) return "busy" as const;
      throw err;
    });
    if (inserted === "busy") return { kind: "busy" };
    if (inserted) return { kind: "created", forWorker: true };
    const earlier = await lookupClaim(
      orm.em.getConnection(),
      n.project_id,
      claim.key,
      claim.fingerprint,
    );
    if (earlier) return earlier;
  }
  throw new Error("idempotency record vanished twice");
}

/**
 * The idempotent insert: one statement, one round trip, one commit, whose `lock_timeout` bounds
 * only its own wait for a concurrent holder of the key (never the pool's other statements).
 */
async function claimAndInsert(orm: Orm, n: NotificationRecord, claim: IdempotencyClaim) {
  const res = await orm.em
    .getConnection()
    .execute<{ affectedRows: number }>(
      insertIdempotent,
      [
        `${Math.floor(claim.waitMs)}ms`,
        n.project_id,
        claim.key,
        n.project_id,
        claim.key,
        claim.fingerprint,
        n.id,
        Buffer.from(claim.response),
        n.created_at,
        n.created_at,
        claim.ttlSeconds,
        ...notificationValues(n),
      ],
      "run",
    );
  return res.affectedRows === 1;
}

/** What an earlier request with this key says about this one, if the key is in use. */
export async function lookupClaim(
  db: Db,
  projectId: string,
  key: string,
  fingerprint: Buffer,
): Promise<Extract<PublishResult, { kind: "replay" | "mismatch" }> | undefined> {
  const rows = await db.execute<{ fingerprint: Buffer; response: Buffer }[]>(
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
