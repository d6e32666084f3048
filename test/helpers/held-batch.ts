/**
 * Holding a group commit's batch open from the outside, for tests of what a batch does: a
 * test-only trigger makes an insert whose title is `sleep S` sleep S seconds, one titled `hold`
 * wait for a lock the test holds (`inOneBatch`), and one titled `boom` fail.
 */
import pg from "pg";
import { sql } from "./db.ts";
import { waitFor } from "./wait.ts";

/** The advisory lock a `hold` insert waits for. */
const holdKey = 4242;

/** Installs the trigger on the server's database. */
export async function installInsertHook(databaseUrl: string): Promise<void> {
  await sql(
    databaseUrl,
    `create function test_hook() returns trigger language plpgsql as $$
     begin
       if new.title like 'sleep %' then perform pg_sleep(split_part(new.title, ' ', 2)::float); end if;
       if new.title = 'boom' then raise exception 'boom'; end if;
       if new.title = 'hold' then perform pg_advisory_xact_lock_shared(${holdKey}); end if;
       return new;
     end $$;
     create trigger test_hook before insert on notification for each row execute function test_hook()`,
  );
}

/** Waits until `count` publishes wait for the server's commit slot (its gauge says so). */
export async function publishesWaiting(serverUrl: string, count: number): Promise<void> {
  let waiting: string | undefined;
  await waitFor(async () => {
    const scrape = await (await fetch(`${serverUrl}/metrics`)).text();
    waiting = /^herald_publishes_waiting (\d+)$/m.exec(scrape)?.[1];
    return waiting === String(count);
  });
  if (waiting !== String(count)) {
    throw new Error(`expected ${count} publishes waiting for the slot, the gauge says ${waiting}`);
  }
}

/**
 * Runs `during` while a batch is held open: `hold()` publishes a notification titled `hold`,
 * whose insert waits for a lock the test holds, so its batch holds a commit slot for as long as
 * `during` takes, not for a guessed time. The lock goes once `during` is done (or fails).
 */
export async function whileHeld<H, D>(
  server: { databaseUrl: string },
  hold: () => Promise<H>,
  during: () => Promise<D>,
): Promise<{ held: Promise<H>; done: D }> {
  const lock = new pg.Client({ connectionString: server.databaseUrl });
  await lock.connect();
  try {
    await lock.query("select pg_advisory_lock($1)", [holdKey]);
    const held = hold();
    await waitFor(
      async () =>
        (
          await sql<{ n: number }>(
            server.databaseUrl,
            "select count(*)::int n from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory'",
          )
        )[0]?.n === 1,
    );
    return { held, done: await during() };
  } finally {
    // Ending the session lets the lock go: the `hold` publish commits, the next batch goes.
    await lock.end();
  }
}

/**
 * Makes the next batch of a server with one commit slot (`whileHeld`): `send()` publishes, and
 * once `count` publishes wait for the slot the lock goes and they form the next batch. Returns
 * both answers unawaited.
 */
export async function inOneBatch<H, S>(
  server: { url: string; databaseUrl: string },
  hold: () => Promise<H>,
  count: number,
  send: () => Promise<S>,
): Promise<{ held: Promise<H>; sent: Promise<S> }> {
  const { held, done } = await whileHeld(server, hold, async () => {
    const sent = send();
    await publishesWaiting(server.url, count);
    return { sent };
  });
  return { held, sent: done.sent };
}

/** The transactions (`xmin`) that inserted the notifications of these titles, with counts. */
export const xminsOf = (databaseUrl: string, titles: string[]) =>
  sql<{ xmin: string; n: string }>(
    databaseUrl,
    "select xmin::text, count(*) as n from notification where title = any($1) group by 1",
    [titles],
  );
