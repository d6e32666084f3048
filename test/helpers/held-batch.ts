/**
 * Holding a group commit's batch open from the outside, for tests of what a batch does: a
 * test-only trigger makes an insert whose title is `sleep S` sleep S seconds, one titled `hold`
 * wait for a lock the test holds (either holds its server's one commit slot), and one titled
 * `boom` fail.
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

/** Waits until one session of the database waits as `waiting` says (of pg_stat_activity). */
const oneSessionWaits = (databaseUrl: string, waiting: string) =>
  waitFor(
    async () =>
      (
        await sql<{ n: number }>(
          databaseUrl,
          `select count(*)::int n from pg_stat_activity where ${waiting}`,
        )
      )[0]?.n === 1,
  );

/** Waits until a `sleep` publish sleeps in its insert, holding the one slot. */
export const holding = (databaseUrl: string) =>
  oneSessionWaits(databaseUrl, "wait_event = 'PgSleep'");

/**
 * Takes the lock a publish titled `hold` waits for in its insert: with it, a test holds the
 * server's one commit slot for as long as it needs, not for a guessed time, and lets it go once
 * what it sends meanwhile is waiting (`publishesWaiting`).
 */
export async function holdLock(databaseUrl: string) {
  const session = new pg.Client({ connectionString: databaseUrl });
  await session.connect();
  await session.query("select pg_advisory_lock($1)", [holdKey]);
  return {
    /** Waits until a `hold` publish waits for the lock in its insert, holding the slot. */
    held: () =>
      oneSessionWaits(databaseUrl, "wait_event_type = 'Lock' and wait_event = 'advisory'"),
    /** Ends the session, and with it the lock: the `hold` publish commits, the next batch goes. */
    release: () => session.end(),
  };
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

/** The transactions (`xmin`) that inserted the notifications of these titles, with counts. */
export const xminsOf = (databaseUrl: string, titles: string[]) =>
  sql<{ xmin: string; n: string }>(
    databaseUrl,
    "select xmin::text, count(*) as n from notification where title = any($1) group by 1",
    [titles],
  );
