/**
 * A database that stops answering without a word (a storage stall, a network dropping packets,
 * a process held): it neither refuses nor closes, so nothing fails by itself. A serving process
 * replaced meanwhile must still serve, answer `unavailable` within a deadline, and listen for
 * streams once the database answers. Before, its start waited on the stream hub's LISTEN until
 * Fastify's 10 s for onReady ran out, three starts failed so in a row, and the supervisor
 * stopped Herald for good; and a call waiting for a connection waited as long as the silence.
 */
import { describe, expect, it } from "vitest";
import { freshDatabase } from "../helpers/db.ts";
import { publisher, spawnHerald, waitForKey } from "../helpers/process.ts";
import { startDatabaseProxy } from "../helpers/tcp-proxy.ts";
import { tempDir } from "../helpers/temp.ts";
import { servingProcesses } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

describe("a database gone silent while a serving process is replaced", () => {
  it("the new process serves, answers 503 with Retry-After, and listens once the database answers", async () => {
    const database = await freshDatabase();
    const proxy = await startDatabaseProxy(database);
    const proc = await spawnHerald({
      DATABASE_URL: proxy.through(database),
      HERALD_BOOTSTRAP: "1",
      HERALD_DATA_DIR: tempDir("herald-db-silent-"),
      HERALD_PROCESSES: "1",
    });
    const key = await waitForKey(proc);
    const publish = publisher(proc, key, 30_000);
    expect((await publish("before the silence")).status).toBe(202);

    // New connections are accepted and then hear nothing; the serving process dies.
    const held = proxy.hold();
    const [first] = servingProcesses(proc.child.pid as number);
    process.kill(first as number, "SIGKILL");
    await held;
    const listening = () => proc.stdout().match(/Server listening at/g)?.length ?? 0;
    await waitFor(() => listening() === 2, 30_000);
    expect(listening()).toBe(2);
    expect(proc.stdout()).toContain("the stream hub: the database is unavailable; waiting for it");

    // Calls that need the database are answered unavailable, not held for the silence.
    const [ready, during] = await Promise.all([
      fetch(`${proc.url}/readyz`, { signal: AbortSignal.timeout(30_000) }),
      publish("during the silence"),
    ]);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: "not_ready",
      reason: "the database does not answer",
    });
    expect(during.status).toBe(503);
    expect(during.headers.get("retry-after")).toMatch(/^\d+$/);

    proxy.release();
    await waitFor(() => proc.stdout().includes("the stream hub: the database is back"), 30_000);
    expect((await publish("after the silence")).status).toBe(202);
    expect(proc.stdout()).not.toContain("keep failing to start");

    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    await proxy.close();
  }, 120_000);
});
