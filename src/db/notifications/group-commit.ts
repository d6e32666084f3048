/**
 * Group commit for publishes. Publishes that arrive while earlier ones are being committed are
 * written together: their notification rows and idempotency claims go in as one multi-row
 * statement, one transaction, one commit (one WAL flush for the lot), and each caller is
 * answered only after the commit that holds its row. Nothing waits on a timer: when no commit
 * is under way a publish goes at once (alone, if it is alone), so an idle server adds no
 * latency; under load, what queued meanwhile forms the next batch. A further slot is taken only
 * by a batch of at least `besideAtLeast` publishes: fewer wait for the commit under way and go
 * in the batch after it, instead of paying a commit of their own for a handful.
 *
 * Idempotency inside a batch: every claim first takes a transaction-scoped advisory lock on its
 * (project, key) with `pg_try_advisory_xact_lock`, which never waits. The single-request path
 * (publish.ts) takes the same lock, waiting up to the idempotency wait. So a key whose holder has
 * not committed yet is found without blocking the batch; that one publish leaves the batch and
 * takes the single path, which waits for the holder as before. Two publishes of one key in the
 * same batch would collide in one statement: the second waits for the next batch, where it
 * finds the first's record and replays it. A batch that fails as a whole (not because the
 * database is down) is retried one publish at a time, so one bad row fails one request alone,
 * and a row lock held outside Herald holds the batch up for at most 100 ms (a table's lock, up
 * to the pool's statement deadline: orm.ts).
 */
import type { NotificationRecord } from "../../domain/notification.ts";
import { isDatabaseUnavailable, isStatementCancelled } from "../errors.ts";
import { bound, type Orm } from "../orm.ts";
import {
  notificationColumns,
  notificationColumnsOf,
  recordsetColumns,
  recordsetEntry,
} from "./codec.ts";
import { announcementOf, reaches } from "./fan-out.ts";
import { claimRecord, keyLock } from "./idempotency-claim.ts";
import {
  type IdempotencyClaim,
  lookupClaim,
  type PublishResult,
  publish as publishAlone,
} from "./publish.ts";

/** What the statement says of each publish of the batch. */
interface Row {
  i: number;
  got: boolean;
  inserted: boolean;
  /** Its fan-out, or push deliveries it made, wait for a worker. */
  for_worker: boolean;
  /** Fanned out in this commit: consoles' feeds of its project have news. */
  fed: boolean;
}

interface Pending {
  n: NotificationRecord;
  claim?: IdempotencyClaim;
  resolve: (r: PublishResult) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
  /** Batches committing at once (each holds one pooled connection while it runs). */
  slots: number;
  /** Most publishes in one batch. */
  maxBatch: number;
  /**
   * Most devices a publish may reach to be fanned out in its own commit (0: none is, every
   * publish is left to the workers' fan-out); a batch fans out at most `batchShare` times as
   * many deliveries.
   */
  fanOutAtCommit: number;
  /**
   * Told each batch's size and its statement's time in seconds (from asking the pool for a
   * connection to PostgreSQL's answer: the inserts, the fan-out at commit and the commit; failed
   * or not), for metrics.
   */
  onBatch?: (size: number, seconds: number) => void;
  /** Told after each commit the projects it fanned out, one a publish: news for consoles' feeds. */
  onFed?: (projectIds: string[]) => void;
}

/**
 * Fewest publishes a batch carries to commit beside another one under way; fewer wait for it.
 * Taking a free slot at once for whatever had queued made 43 % of the commits at maximum load
 * single publishes, each paying a whole statement and commit; 12 to 24 gave 5-30 % more
 * publishes a second than 1 (h2load, REST and gRPC, alternated: BENCHMARKS.md). 24 against 16
 * (forty-first session): 50 REST connections at their maximum made three cohorts of about 16
 * (one flushing, one waiting for that flush, one on its way back), each commit a WAL flush of
 * its own; at 24 they make fewer, larger commits. On a disk whose flush is 2 ms slower, REST 15 %
 * and gRPC 6 % more a second (four alternations); on this machine's own disk no difference its
 * noise lets one see (eighteen REST pairs); 28 and 32 lost on the slow disk (the cohort never
 * grew that large).
 */
export const besideAtLeast = 24;

/** A batch's deliveries made at commit, in publishes' worth of `fanOutAtCommit`. */
const batchShare = 20;

/**
 * How long a batch waits for a row lock (its own statement's setting). Herald's own holders of a
 * key are found by the advisory lock without waiting; a row held by anything else (a purge, a
 * session outside Herald) fails the batch quickly, and its publishes go one by one instead.
 */
const batchLockTimeoutMs = 100;

/*
 * One statement: lock, claim, insert and fan out every publish of the batch. Sent through pg
 * itself, as a named prepared statement with its parameters bound: each connection parses and
 * plans it once, and the batch's JSON is neither escaped nor inlined into the text (MikroORM's
 * `execute` formats parameters into the SQL client-side: profiled at 2 % of a publish's CPU).
 *
 * The fan-out at commit: a queued publish that reaches at most $2 devices (the fan-out's rule,
 * fan-out.ts) gets its deliveries in this same statement, up to $3 deliveries for the batch, and
 * is committed `delivering` (or `no_devices`, reaching none) instead of `queued`; the streams of
 * every process hear of it at this commit (NOTIFY), and consoles' feeds after it (`onFed`: a
 * NOTIFY here would queue the slots' commits on each other, feed-news.ts). One that reaches
 * more, or past the batch's share, is committed `queued` for the workers' fan-out, as every
 * publish was before: a big account's fan-out never lengthens the other publishes' commit by
 * more than $3 rows. Each publish saves the fan-out's second write of its row (a non-HOT update,
 * and its lock) and its statement: measured in BENCHMARKS.md (issue 24).
 */
const batchStatement = `
  with wait as materialized (
    select set_config('lock_timeout', '${batchLockTimeoutMs}ms', true)
  ), input as materialized (
    select x.* from wait, json_to_recordset($1::json) as x(
      i int, ${recordsetColumns}, key text, fingerprint text, response text, ttl int)
  ), locked as materialized (
    select x.*, x.key is null or pg_try_advisory_xact_lock(${keyLock("x.project_id", "x.key")}) as got
      from input x order by x.i
  ), claim as (${claimRecord(
    `select l.project_id, l.key, decode(l.fingerprint, 'base64'), l.id,
           decode(l.response, 'base64'), l.created_at, l.created_at + make_interval(secs => l.ttl)
      from locked l where l.key is not null and l.got`,
    "notification_id",
  )}
  ), reach as materialized (
    -- one more than the bound at most: a publish that reaches more is left to the workers
    select l.i, r.device_id, r.platform
      from locked l
      join project p on p.id = l.project_id
      cross join lateral (
        select d.id as device_id, d.platform from device d
         where d.account_id = p.account_id and ${reaches("d", "l.topic", "p.name")}
         limit $2::int + 1) r
     where $2::int > 0 and l.got and l.status = 'queued'
  ), at_commit as materialized (
    select s.i from (
      select r.i, sum(count(*)) over (order by r.i) as upto
        from reach r group by r.i having count(*) <= $2::int
    ) s where s.upto <= $3::int
  ), ins as (
    insert into notification (${notificationColumns})
    select ${notificationColumnsOf("l", {
      status: `case when l.status <> 'queued' or $2::int = 0 then l.status
                    when l.i in (select i from at_commit) then 'delivering'
                    when l.i in (select i from reach) then 'queued'
                    else 'no_devices' end`,
    })}
      from locked l
     where l.got and (l.key is null or l.id in (select notification_id from claim))
    returning id, status, project_id
  ), dlv as (
    insert into delivery (notification_id, device_id, platform, next_attempt_at)
    select ins.id, r.device_id, r.platform, now()
      from ins join locked l on l.id = ins.id join reach r on r.i = l.i
     where ins.status = 'delivering'
    returning notification_id, platform
  ), pushes as (
    select notification_id, count(*) as n from dlv where platform <> 'stream' group by 1
  ), ${announcementOf("dlv")}
  select l.i, l.got, ins.id is not null as inserted,
         ins.status = 'queued' or coalesce(p.n, 0) > 0 as for_worker,
         coalesce(ins.status in ('delivering', 'no_devices'), false) as fed,
         (select count(*) from announced) as announcements
    from locked l left join ins on ins.id = l.id left join pushes p on p.notification_id = l.id`;

export class GroupCommitter {
  readonly #orm: Orm;
  readonly #o: GroupCommitOptions;
  #queue: Pending[] = [];
  #busy = 0;
  /** (project, key) of claims in a batch under way: a second one waits for the next batch. */
  readonly #keysInFlight = new Set<string>();

  constructor(orm: Orm, opts: GroupCommitOptions) {
    this.#orm = orm;
    this.#o = opts;
  }

  /** Publishes waiting for a commit slot (a gauge, read when scraped). */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Inserts the notification (and its claim) in the next commit; answers after it. */
  publish(n: NotificationRecord, claim?: IdempotencyClaim): Promise<PublishResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ n, claim, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (
      this.#busy < this.#o.slots &&
      this.#queue.length >= (this.#busy === 0 ? 1 : besideAtLeast)
    ) {
      const batch: Pending[] = [];
      const later: Pending[] = [];
      for (const p of this.#queue) {
        const k = p.claim && keyOf(p);
        if (batch.length >= this.#o.maxBatch || (k && this.#keysInFlight.has(k))) {
          later.push(p);
          continue;
        }
        if (k) this.#keysInFlight.add(k);
        batch.push(p);
      }
      this.#queue = later;
      if (batch.length === 0) return; // every one waits for a key in flight
      this.#busy++;
      void this.#commit(batch).finally(() => {
        for (const p of batch) if (p.claim) this.#keysInFlight.delete(keyOf(p));
        this.#busy--;
        this.#dispatch();
      });
    }
  }

  async #commit(batch: Pending[]): Promise<void> {
    let rows: Row[];
    try {
      rows = await this.#statement(batch);
    } catch (err) {
      // Down is down for every one of them; anything else is retried one by one, so that one
      // bad row fails its own request alone. Past the statement deadline (a table held locked),
      // what queued meanwhile would wait a second deadline for the same lock: it fails too.
      const queued = isStatementCancelled(err) ? this.#queue.splice(0) : [];
      if (isDatabaseUnavailable(err)) for (const p of [...batch, ...queued]) p.reject(err);
      else await Promise.all(batch.map((p) => this.#alone(p)));
      return;
    }
    const fed = rows.filter((r) => r.fed).map((r) => (batch[r.i] as Pending).n.project_id);
    if (fed.length > 0) this.#o.onFed?.(fed);
    await Promise.all(
      rows.map(async (r) => {
        const p = batch[r.i] as Pending;
        if (r.inserted) return p.resolve({ kind: "created", forWorker: r.for_worker });
        // Its key's holder has not committed (wait for it), or the key is taken: say by whom.
        if (!r.got || !p.claim) return this.#alone(p);
        try {
          const db = this.#orm.em.getConnection();
          const earlier = await lookupClaim(db, p.n.project_id, p.claim.key, p.claim.fingerprint);
          // None: the record expired and was purged meanwhile; the single path sorts it out.
          if (earlier) p.resolve(earlier);
          else await this.#alone(p);
        } catch (err) {
          p.reject(err);
        }
      }),
    );
  }

  /** The batch's one statement, timed for `onBatch` from the pool's connection to the answer. */
  async #statement(batch: Pending[]): Promise<Row[]> {
    const { fanOutAtCommit } = this.#o;
    const params = [JSON.stringify(batch.map(input)), fanOutAtCommit, fanOutAtCommit * batchShare];
    const sent = performance.now();
    try {
      return await bound<Row>(
        this.#orm.em.getConnection(),
        batchStatement,
        params,
        "herald_group_commit",
      );
    } finally {
      this.#o.onBatch?.(batch.length, (performance.now() - sent) / 1000);
    }
  }

  async #alone(p: Pending): Promise<void> {
    await publishAlone(this.#orm, p.n, p.claim).then(p.resolve, p.reject);
  }
}

const keyOf = (p: Pending) => `${p.n.project_id}/${p.claim?.key}`;

/** A publish as the statement's `json_to_recordset` reads it (a member left out is NULL). */
function input(p: Pending, i: number) {
  const { n, claim } = p;
  const entry = recordsetEntry(n);
  entry.i = i;
  if (claim) {
    entry.key = claim.key;
    entry.fingerprint = claim.fingerprint.toString("base64");
    entry.response = Buffer.from(claim.response).toString("base64");
    entry.ttl = claim.ttlSeconds;
  }
  return entry;
}
