/** Scenario 5: the machine's own limits, measured in the same run: PostgreSQL, the disk, Fastify. */
import { spawn } from "node:child_process";
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import pg from "pg";
import { uuidv7 } from "../../../src/domain/ids.ts";
import { fmt, log, record, root, secs, work } from "../context.ts";
import { databaseUrl } from "../infrastructure.ts";
import { drive, summarize } from "../stats.ts";

/** PostgreSQL's rate of single-row commits, from Node's `pg` (the yardstick is pgbench's). */
async function postgresLimits(): Promise<number> {
  const raw = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  await raw.query("create table if not exists bench_commit (like notification including defaults)");
  const projectId = (await raw.query<{ id: string }>("select id from project limit 1")).rows[0]?.id;
  const commit = async () => {
    await raw.query(
      `insert into bench_commit (id, project_id, topic, title, message, priority, status, created_at)
         values ($1, $2, 'bench', 'Deploy finished', '', 'high', 'queued', now())`,
      [uuidv7(), projectId],
    );
  };
  const commits = await drive(commit, { seconds: secs(10), concurrency: 50 });
  // The latency floor under Herald's fixed-rate publish: the same commits, at 500/s.
  const commitsAt500 = await drive(commit, { seconds: secs(10), concurrency: 50, rate: 500 });
  await raw.query("drop table bench_commit");
  await raw.end();
  record(
    "PostgreSQL: committed single-row inserts (50 concurrent)",
    `${commits.perSecond}/s, p99 ${commits.p99} ms`,
    commits,
  );
  record(
    "PostgreSQL: committed single-row inserts at 500/s offered",
    fmt(commitsAt500),
    commitsAt500,
  );
  return commits.perSecond;
}

/** The disk under PostgreSQL: 8 KiB writes, each flushed. */
function diskLimit(): void {
  // And under that, the disk: every commit waits for its WAL write to be flushed.
  const probe = join(work, "fsync-probe");
  const fd = openSync(probe, "w");
  const page = Buffer.alloc(8192, 1);
  const flushes: number[] = [];
  for (const end = performance.now() + secs(10) * 1000; performance.now() < end; ) {
    const t = performance.now();
    writeSync(fd, page, 0, page.length, 0);
    fdatasyncSync(fd);
    flushes.push(performance.now() - t);
  }
  closeSync(fd);
  const disk = summarize(flushes, 0, secs(10));
  const slow = flushes.filter((ms) => ms > 25).length;
  // Not Math.max(...flushes): a fast disk flushes over 100,000 times in 10 s, past the stack.
  const worst = Math.round(flushes.reduce((a, b) => Math.max(a, b), 0));
  record(
    "disk: 8 KiB write + fdatasync, one after another",
    `${disk.perSecond}/s, p50 ${disk.p50} ms, p99 ${disk.p99} ms, max ${worst} ms, ${slow} over 25 ms`,
    { ...disk, max: worst, over25ms: slow },
  );
}

/** A bare Fastify route answering from memory: the HTTP ceiling of one Node process. */
async function bareFastify(): Promise<number> {
  const bare = spawn(
    process.execPath,
    [
      "-e",
      "const f=require('fastify')();f.post('/',async()=>({ok:true}));f.listen({port:0,host:'127.0.0.1'}).then(a=>console.log(a))",
    ],
    { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
  );
  const bareUrl = await new Promise<string>((r) =>
    bare.stdout?.once("data", (c: Buffer) => r(c.toString().trim())),
  );
  const bareRun = await autocannon({
    url: bareUrl,
    method: "POST",
    body: "{}",
    connections: 50,
    duration: secs(10),
  });
  bare.kill();
  const bareRate = Math.round(bareRun.requests.average);
  record(
    "bare Fastify route from memory (50 connections)",
    `${bareRate}/s, p99 ${bareRun.latency.p99} ms`,
    { perSecond: bareRate },
  );
  return bareRate;
}

/**
 * The machine's other limits, and Herald's REST maximum (scenario 1's; NaN when it did not run)
 * as a share of each.
 */
export async function limits(restMax: number, yardstick: number): Promise<void> {
  log("5. the machine's limits");
  const commits = { perSecond: await postgresLimits() };
  diskLimit();
  const bareRate = await bareFastify();
  const commitRate = yardstick;
  const share = "Herald REST publish as a share of the limits";
  if (!Number.isFinite(restMax)) {
    record(share, "not in this run: its REST maximum is scenario 1's (`--only 1,5`)", {});
    return;
  }
  record(
    share,
    `${Math.round((restMax / commits.perSecond) * 100)}% of PostgreSQL's single-row commit rate, ${Number.isFinite(commitRate) ? `${(restMax / commitRate).toFixed(2)}×` : "no ratio to"} the yardstick (pgbench), ${Math.round((restMax / bareRate) * 100)}% of a bare Fastify route`,
    {
      ofCommits: restMax / commits.perSecond,
      ofTransactions: restMax / commitRate,
      ofFastify: restMax / bareRate,
    },
  );
}
