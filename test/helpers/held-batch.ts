/**
 * Holding a group commit's batch open from the outside, for tests of what a batch does: a
 * test-only trigger makes an insert whose title is `sleep S` sleep S seconds (holding its
 * server's one commit slot), and one titled `boom` fail.
 */
import { sql } from "./db.ts";
import { waitFor } from "./wait.ts";

/** Installs the trigger on the server's database. */
export async function installInsertHook(databaseUrl: string): Promise<void> {
  await sql(
    databaseUrl,
    `create function test_hook() returns trigger language plpgsql as $$
     begin
       if new.title like 'sleep %' then perform pg_sleep(split_part(new.title, ' ', 2)::float); end if;
       if new.title = 'boom' then raise exception 'boom'; end if;
       return new;
     end $$;
     create trigger test_hook before insert on notification for each row execute function test_hook()`,
  );
}

/** Waits until a `sleep` publish sleeps in its insert, holding the one slot. */
export const holding = (databaseUrl: string) =>
  waitFor(
    async () =>
      (
        await sql<{ n: number }>(
          databaseUrl,
          "select count(*)::int n from pg_stat_activity where wait_event = 'PgSleep'",
        )
      )[0]?.n === 1,
  );

/** The transactions (`xmin`) that inserted the notifications of these titles, with counts. */
export const xminsOf = (databaseUrl: string, titles: string[]) =>
  sql<{ xmin: string; n: string }>(
    databaseUrl,
    "select xmin::text, count(*) as n from notification where title = any($1) group by 1",
    [titles],
  );
