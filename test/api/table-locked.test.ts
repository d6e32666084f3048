/**
 * A table an operator holds locked (`LOCK TABLE`, `VACUUM FULL`, a `CREATE INDEX` without
 * CONCURRENTLY): a serving process's statements wait for it at most their deadline, then their
 * calls are answered 503 with a Retry-After and nothing of them is stored. Before, every publish
 * waited as long as the lock was held (a batch's own lock_timeout is set by its statement, after
 * PostgreSQL has waited for the table), and the pool's connections with them.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { freshDatabase, sql } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { logLines, publisher, spawnHerald, waitForKey } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { waitFor } from "../helpers/wait.ts";

describe("a table held locked by an operator", () => {
  it("answers publishes 503 with Retry-After without waiting for the lock, stores none of them, and serves once it is let go", async () => {
    const database = await freshDatabase();
    const proc = await spawnHerald({
      DATABASE_URL: database,
      HERALD_BOOTSTRAP: "1",
      HERALD_DATA_DIR: tempDir("herald-table-locked-"),
      HERALD_PROCESSES: "1",
      HERALD_DB_POOL_SIZE: "4",
    });
    const key = await waitForKey(proc);
    // Far past the deadline (10 s): without one, the answer never came while the lock held.
    const publish = publisher(proc, key, 60_000);
    expect((await publish("before the lock")).status).toBe(202);

    const operator = new pg.Client({ connectionString: database });
    await operator.connect();
    await operator.query("begin");
    await operator.query("lock table notification in access exclusive mode");
    // More calls than the pool has connections: none may keep one for the lock's length.
    const titles = Array.from({ length: 6 }, (_, i) => `during the lock ${i}`);
    const sent = performance.now();
    const answers = await Promise.all(titles.map(publish));
    expect(answers.map((a) => a.status)).toEqual(titles.map(() => 503));
    // One deadline, not two: those queued behind the first batch (which commits alone, and
    // then holds the only slot) are answered with it, not after a statement of their own.
    expect(performance.now() - sent).toBeLessThan(18_000);
    for (const a of answers) {
      expect(a.headers.get("retry-after")).toMatch(/^\d+$/);
      expect((await body(a)).code).toBe("unavailable");
    }
    // The lines come through the supervisor's pipe, after the answers.
    const said = () => logLines(proc.stdout(), "database unavailable");
    await waitFor(() => said().length === titles.length, 10_000);
    expect(said()).toHaveLength(titles.length);
    expect(said()[0]?.reason).toBe("canceling statement due to statement timeout");

    await operator.query("rollback");
    await operator.end();
    expect((await publish("after the lock")).status).toBe(202);
    const stored = await sql<{ title: string }>(
      database,
      "select title from notification order by created_at",
    );
    expect(stored.map((r) => r.title)).toEqual(["before the lock", "after the lock"]);

    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 120_000);
});
