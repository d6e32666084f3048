/**
 * The idempotency claim, written once for both publish paths (publish.ts, one request that may
 * wait; group-commit.ts, a batch that never waits): the key's advisory lock, and the record that
 * claims the key, new or taking over an expired one. A claim that meets a live record claims
 * nothing, and its notification is not inserted.
 */

/** The transaction-scoped advisory lock of a project's key, as SQL over two expressions. */
export const keyLock = (projectId: string, key: string) =>
  `hashtextextended(${projectId}::text || '/' || ${key}, 0)`;

/**
 * `insert … on conflict` of the record: `select` yields its values in the order (project_id,
 * key, fingerprint, notification_id, response, created_at, expires_at); `returning` is what the
 * statement reads back of each claim made.
 */
export const claimRecord = (select: string, returning: string) => `
    insert into idempotency_record as r
      (project_id, key, fingerprint, notification_id, response, created_at, expires_at)
    ${select}
    on conflict (project_id, key) do update
      set fingerprint = excluded.fingerprint, notification_id = excluded.notification_id,
          response = excluded.response, created_at = excluded.created_at,
          expires_at = excluded.expires_at
      where r.expires_at <= now()
    returning ${returning}`;
