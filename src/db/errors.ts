/**
 * Whether an error means the database cannot be reached right now (restarting, failing over,
 * out of connections), as opposed to a bug in a statement. Callers answer those with
 * `unavailable` and a Retry-After, which clients retry, instead of `internal`.
 */

/** Socket errors of a connection refused, cut, or never made. */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ENOTFOUND",
]);

/**
 * SQLSTATEs of a server going away, not taking connections, or out of something it needs: class
 * 08 (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect now), class 53
 * (insufficient resources: a full disk, out of memory, too many connections), 58030 (an I/O
 * error) and 25006 (a read-only transaction: a standby, during a failover). Before, a full
 * disk answered 500 `internal` to every publish (by hand: the data directory on a full tmpfs).
 * And 57014, a statement cancelled: past a serving process's statement deadline (a table an
 * operator holds locked; orm.ts), or by an operator's `pg_cancel_backend`; nothing of it was
 * committed, and the same call may well pass in a moment.
 */
function unavailableState(code: string): boolean {
  return (
    code.startsWith("08") ||
    code.startsWith("53") ||
    ["57014", "57P01", "57P02", "57P03", "58030", "25006"].includes(code)
  );
}

/**
 * What node-postgres says when a connection ends under it, cannot be had in time (a pool's wait;
 * a client's `connectionTimeoutMillis`: "timeout expired"), or (where a client sets
 * `query_timeout`) a statement got no answer in time.
 */
const messages =
  /^timeout expired$|Connection terminated|Query read timeout|connection error and is not queryable|timeout exceeded when trying to connect|terminating connection due to administrator command|the database system is (starting up|shutting down|in recovery mode)/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  for (const { code, message } of wrapped(err)) {
    if (typeof code === "string" && (socketCodes.has(code) || unavailableState(code))) return true;
    if (typeof message === "string" && messages.test(message)) return true;
  }
  return false;
}

/** Whether PostgreSQL's SQLSTATE `state` failed `err`, however the driver or the ORM wrapped it. */
export function hasSqlState(err: unknown, state: string): boolean {
  for (const { code } of wrapped(err)) if (code === state) return true;
  return false;
}

/** A statement PostgreSQL cancelled (57014): past its deadline, or by `pg_cancel_backend`. */
export const isStatementCancelled = (err: unknown) => hasSqlState(err, "57014");

/** `err` and the errors it wraps (`cause`), at most 5 deep. */
function* wrapped(err: unknown): Generator<{ code?: unknown; message?: unknown }> {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    yield e as { code?: unknown; message?: unknown };
    e = (e as { cause?: unknown }).cause;
  }
}
