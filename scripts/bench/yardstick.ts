/**
 * The yardstick every Herald figure is a ratio to: PostgreSQL's own rate of transactions of two
 * inserts shaped like a notification (a publish and its idempotency claim), one transaction per
 * request, 32 clients, driven by pgbench, a C client that costs the cores almost nothing, against
 * the same PostgreSQL as Herald, in the same run.
 *
 * pgbench comes with PostgreSQL (Debian: the postgresql-15 package, /usr/bin/pgbench); .ci/run
 * installs it where it is missing. Without it the yardstick is missing, and the report says so.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { secs, work } from "./context.ts";

const insert = `insert into bench_commit (id, project_id, topic, title, message, priority, status, created_at)
  values (gen_random_uuid(), :project, 'bench', 'Deploy finished', '', 'high', 'queued', now());`;

/** pgbench, if the machine has it. */
export function pgbenchPath(): string | undefined {
  for (const candidate of [
    "pgbench",
    "/usr/lib/postgresql/17/bin/pgbench",
    "/usr/lib/postgresql/15/bin/pgbench",
  ]) {
    if (spawnSync(candidate, ["--version"]).status === 0) return candidate;
  }
  return undefined;
}

export interface Yardstick {
  /** Transactions of two inserts per second; NaN without pgbench. */
  perSecond: number;
  /** What pgbench said of its latency, average in ms. */
  latencyMs: number;
  clients: number;
}

/** Runs the yardstick against `databaseUrl` (a database with Herald's schema). */
export async function measureYardstick(db: pg.Pool, databaseUrl: string): Promise<Yardstick> {
  const clients = 32;
  const bin = pgbenchPath();
  if (!bin) return { perSecond: Number.NaN, latencyMs: Number.NaN, clients };
  await db.query("create table if not exists bench_commit (like notification including defaults)");
  const project = (await db.query<{ id: string }>("select id from project limit 1")).rows[0]?.id;
  const script = join(work, "two-inserts.sql");
  writeFileSync(script, `begin;\n${insert}\n${insert}\ncommit;\n`);
  const out = execFileSync(
    bin,
    [
      "-n",
      "-M",
      "prepared",
      "-c",
      String(clients),
      "-j",
      "2",
      "-T",
      String(secs(10)),
      "-D",
      `project=${project}`,
      "-f",
      script,
      databaseUrl,
    ],
    { encoding: "utf8" },
  );
  await db.query("drop table bench_commit");
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1]);
  const latency = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1]);
  return { perSecond: Math.round(tps), latencyMs: latency, clients };
}
