/**
 * Group commit (issue 11): publishes that arrive together share one transaction (rows inserted
 * by one transaction share its `xmin`), each is answered only after that commit, a lone publish
 * goes at once in a batch of its own, duplicates of one key in a batch still make exactly one
 * notification, and a row that fails fails its own request alone. With two slots, a batch
 * commits beside one under way only when it carries `besideAtLeast` publishes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { besideAtLeast } from "../../src/db/notifications/group-commit.ts";
import { sql } from "../helpers/db.ts";
import {
  inOneBatch,
  installInsertHook,
  publishesWaiting,
  whileHeld,
  xminsOf as xminsIn,
} from "../helpers/held-batch.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ groupCommitSlots: 1 });
  await installInsertHook(server.databaseUrl);
});
afterAll(async () => server.close());

const batchSizes = async () => {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const get = (series: string) =>
    Number(
      text
        .split("\n")
        .find((l) => l.startsWith(`${series} `))
        ?.split(" ")[1] ?? 0,
    );
  return {
    count: get("herald_publish_batch_size_count"),
    sum: get("herald_publish_batch_size_sum"),
    ones: get('herald_publish_batch_size_bucket{le="1"}'),
    commits: get("herald_publish_commit_duration_seconds_count"),
    commitSeconds: get("herald_publish_commit_duration_seconds_sum"),
    commitsWithin50ms: get('herald_publish_commit_duration_seconds_bucket{le="0.05"}'),
  };
};

/** Publishes `title` alone (accepted); how much each of the group commit's metrics moved. */
async function alone(title: string) {
  const before = await batchSizes();
  expect((await notify(server, { title })).status).toBe(202);
  const after = await batchSizes();
  const moved = (k: keyof typeof after) => after[k] - before[k];
  return {
    count: moved("count"),
    ones: moved("ones"),
    commits: moved("commits"),
    commitSeconds: moved("commitSeconds"),
    commitsWithin50ms: moved("commitsWithin50ms"),
  };
}

const xminsOf = (titles: string[]) => xminsIn(server.databaseUrl, titles);
/** The publish that holds the one commit slot while a batch forms (inOneBatch). */
const hold = () => notify(server, { title: "hold" });

describe("group commit", () => {
  it("commits publishes that arrive together in one transaction", async () => {
    // One slot, held until the hundred sent meanwhile wait too: they form the next batch. (A
    // slot held for a guessed 0.3 s was not enough for a hundred requests to arrive on a loaded
    // machine: they went in 21 batches.)
    const titles = Array.from({ length: 100 }, (_, i) => `together ${i}`);
    const { held, sent } = await inOneBatch(server, hold, 100, () =>
      Promise.all(titles.map((title) => notify(server, { title }))),
    );
    const answers = await sent;
    expect(answers.map((a) => a.status)).toEqual(titles.map(() => 202));
    expect((await held).status).toBe(202);
    const xmins = await xminsOf(titles);
    expect(xmins).toHaveLength(1);
    expect(Number(xmins[0]?.n)).toBe(100);
  });

  it("sends a lone publish at once, in a batch of its own", async () => {
    const change = await alone("alone");
    expect(change.count).toBe(1);
    expect(change.ones).toBe(1);
  });

  it("times each batch's statement, the database's share of a publish", async () => {
    // The test hook sleeps 60 ms inside the insert: the commit's histogram holds those 60 ms.
    const change = await alone("sleep 0.06");
    expect(change.commits).toBe(1);
    expect(change.commitsWithin50ms).toBe(0);
    expect(change.commitSeconds).toBeGreaterThanOrEqual(0.06);
  });

  it("answers none of a batch whose transaction dies before its commit, and stores none", async () => {
    // The slot is held; then a batch of ten forms, one of which sleeps inside the insert: its
    // session is terminated there, after some rows were inserted and before the commit.
    const titles = ["sleep 5", ...Array.from({ length: 9 }, (_, i) => `doomed ${i}`)];
    const { held: blocker, sent: answers } = await inOneBatch(server, hold, 10, () =>
      Promise.all(titles.map((title) => notify(server, { title }))),
    );
    // The ten queued behind the blocker; once it is answered, the batch of ten is the one asleep.
    expect((await blocker).status).toBe(202);
    let killed = 0;
    await waitFor(async () => {
      const rows = await sql<{ pid: number }>(
        server.databaseUrl,
        `select pg_terminate_backend(pid) as pid from pg_stat_activity
          where datname = current_database() and wait_event = 'PgSleep'
            and query like '%json_to_recordset%' and pid <> pg_backend_pid()`,
      );
      killed += rows.length;
      return killed > 0;
    });
    expect(killed).toBe(1);
    const statuses = (await answers).map((a) => a.status);
    expect(statuses).toEqual(titles.map(() => 503));
    expect(await xminsOf(titles)).toEqual([]);
    // The server serves on: the same publishes, retried, land.
    const retried = await Promise.all(titles.slice(1).map((title) => notify(server, { title })));
    expect(retried.map((a) => a.status)).toEqual(titles.slice(1).map(() => 202));
  });

  it("fails a bad row's request alone; the rest of its batch lands", async () => {
    const titles = Array.from({ length: 10 }, (_, i) => (i === 4 ? "boom" : `fine ${i}`));
    const { held, sent } = await inOneBatch(server, hold, 10, () =>
      Promise.all(titles.map((title) => notify(server, { title }))),
    );
    const answers = await sent;
    await held;
    expect(answers.map((a) => a.status)).toEqual(titles.map((t) => (t === "boom" ? 500 : 202)));
    const stored = await sql(
      server.databaseUrl,
      "select 1 from notification where title like 'fine %'",
    );
    expect(stored).toHaveLength(9);
  });

  it("stores every column a batched publish sets, and nulls where it sets none", async () => {
    // The batch's JSON leaves out the columns that have no value (codec.ts, recordsetEntry).
    const full = {
      title: "batched full",
      message: "all of it",
      topic: "deploys",
      priority: "high",
      click_url: "https://example.com/run/1",
      metadata: { run: 1, tags: ["a"] },
      ttl_seconds: 600,
      require_ack: true,
      repeat_every_seconds: 120,
      escalate_after_seconds: 300,
      escalate_to_topic: "oncall",
      actions: [{ id: "retry", label: "Retry" }],
      replace_key: "run-1",
    };
    const { held, sent } = await inOneBatch(server, hold, 2, () =>
      Promise.all([
        notify(server, full, { "idempotency-key": "batched-full" }),
        notify(server, { title: "batched bare" }),
      ]),
    );
    const answers = await sent;
    await held;
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    const rows = await sql<Record<string, unknown>>(
      server.databaseUrl,
      `select n.title, n.message, n.topic, n.priority, n.click_url, n.metadata, n.ttl_seconds,
              n.expires_at is not null as expires, n.require_ack, n.repeat_every_seconds,
              n.escalate_after_seconds, n.escalate_topic, n.next_repeat_at is not null as repeats,
              n.escalate_at is not null as escalates, n.actions, n.replace_key,
              r.key is not null as claimed, n.xmin::text as xmin
         from notification n left join idempotency_record r on r.notification_id = n.id
        where n.title like 'batched %' order by n.title`,
    );
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
    const { xmin: _full, ...stored } = rows[1] ?? {};
    // Each column as the request gave it (the escalation's topic is a column of another name).
    const { escalate_to_topic, actions, ...columns } = full;
    expect(stored).toEqual({
      ...columns,
      escalate_topic: escalate_to_topic,
      actions: actions.map((a) => expect.objectContaining(a)),
      expires: true,
      repeats: true,
      escalates: true,
      claimed: true,
    });
    const { xmin: _bare, ...bare } = rows[0] ?? {};
    expect(bare).toEqual({
      title: "batched bare",
      message: "",
      topic: "default",
      priority: "normal",
      click_url: null,
      metadata: null,
      ttl_seconds: null,
      expires: false,
      require_ack: false,
      repeat_every_seconds: null,
      escalate_after_seconds: null,
      escalate_topic: null,
      repeats: false,
      escalates: false,
      actions: null,
      replace_key: null,
      claimed: false,
    });
  });

  it("makes one notification of 50 concurrent duplicates, replaying it byte for byte", async () => {
    const body = { title: "once", metadata: { n: 1 } };
    const { held, sent } = await inOneBatch(server, hold, 50, () =>
      Promise.all(
        Array.from({ length: 50 }, () => notify(server, body, { "idempotency-key": "dup-50" })),
      ),
    );
    const answers = await sent;
    await held;
    const created = answers.filter((a) => a.status === 202);
    const replays = answers.filter((a) => a.status === 200);
    expect(created).toHaveLength(1);
    expect(replays).toHaveLength(49);
    for (const r of replays) {
      expect(r.text).toBe(created[0]?.text);
      expect(r.headers.get("idempotent-replayed")).toBe("true");
    }
    expect(
      await sql(server.databaseUrl, "select 1 from notification where title = 'once'"),
    ).toHaveLength(1);
    // A different body with the key, in the next batch: 422.
    const other = await notify(server, { title: "other" }, { "idempotency-key": "dup-50" });
    expect(other.status).toBe(422);
  });
});

describe("group commit with a second slot", () => {
  let two: TestServer;
  beforeAll(async () => {
    two = await startServer({ groupCommitSlots: 2 });
    await installInsertHook(two.databaseUrl);
  });
  afterAll(async () => two.close());

  it("commits beside a batch under way only a batch of at least besideAtLeast publishes", async () => {
    const few = Array.from({ length: besideAtLeast - 1 }, (_, i) => `few ${i}`);
    let answered = 0;
    const send = (title: string) =>
      notify(two, { title }).then((a) => {
        answered++;
        return a;
      });
    let heldDone = false;
    const { held, done } = await whileHeld(
      two,
      () =>
        notify(two, { title: "hold" }).finally(() => {
          heldDone = true;
        }),
      async () => {
        // One short of a batch: they wait for the commit under way, though a slot is free.
        const waiting = few.map(send);
        await publishesWaiting(two.url, few.length);
        expect(answered).toBe(0);
        // One more makes a batch worth the second slot: it commits while the first is held.
        const all = await Promise.all([...waiting, send("one more")]);
        expect(heldDone).toBe(false);
        return all;
      },
    );
    expect(done.map((a) => a.status)).toEqual(done.map(() => 202));
    const xmins = await xminsIn(two.databaseUrl, [...few, "one more"]);
    expect(xmins).toHaveLength(1);
    expect(Number(xmins[0]?.n)).toBe(besideAtLeast);
    expect((await held).status).toBe(202);
  });
});
