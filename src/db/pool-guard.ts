/**
 * A pooled connection that breaks while it is checked out must still go back to the pool. Kysely's
 * controlled transactions (behind MikroORM's `transactional`) release their connection only after
 * BEGIN, COMMIT or ROLLBACK succeeds: when the database goes away in the middle of one, none of
 * them can, and the connection is never released. The pool then counts it in use forever, one
 * lost per restart that met a transaction, until it has none left and every call waits (and
 * closing the pool never returns). So a connection that ends or fails while checked out is
 * released at once with its error (the pool discards it), and its holder's later release is a
 * no-op.
 *
 * And a connection asked for before the pool began to close, but opened after, is given back and
 * its ask fails: Kysely's driver, once handed a new connection, reads its pool again, which it
 * forgot when it began to close; it throws then without releasing the connection, and the close
 * waits for it forever (a stream's last statement, racing a server's stop).
 */
import type { Pool, PoolClient } from "pg";

export function guardPool(pool: Pool): void {
  pool.on("acquire", (client: PoolClient) => {
    // pg-pool gives the client its `release` right after this event, and may call it at once
    // itself (a waiter whose connect timed out meanwhile): guarded as it is set. Guarded a
    // microtask later, as it was, such a client was already back in the pool, and its end
    // released it again, which pg-pool throws on (uncaught, in database-restart.test).
    let guarded: PoolClient["release"] | undefined;
    Object.defineProperty(client, "release", {
      configurable: true,
      enumerable: true,
      get: () => guarded,
      set: (release: PoolClient["release"]) => {
        guarded = guard(client, release);
      },
    });
  });
  // The promise form only: pg-pool's own `query` asks with a callback and releases by itself.
  const connect = pool.connect.bind(pool) as Pool["connect"];
  const closing = async () => {
    const client = await connect();
    if (!pool.ending) return client;
    client.release();
    throw new Error("the database pool is closing");
  };
  pool.connect = ((callback?: Parameters<Pool["connect"]>[0]) =>
    callback ? connect(callback) : closing()) as Pool["connect"];
}

/** `release`, given back once, and at once if the connection ends or fails first. */
function guard(client: PoolClient, release: PoolClient["release"]): PoolClient["release"] {
  let released = false;
  const once = (err?: Error | boolean) => {
    if (released) return;
    released = true;
    client.removeListener("error", broke);
    client.removeListener("end", ended);
    release(err);
  };
  const broke = (err: Error) => once(err);
  const ended = () => once(new Error("the database connection ended"));
  client.on("error", broke);
  client.on("end", ended);
  return once;
}
