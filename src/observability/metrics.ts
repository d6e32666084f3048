/**
 * Herald's Prometheus metrics, one registry per app (tests run several in one process). The
 * transport counts calls (server/interceptors/logging.ts), the worker reports each send's
 * outcome, and the gauges read their sources when scraped: the queue from PostgreSQL (two
 * index reads), streams and the pool from memory. Names and labels: docs/operations.md.
 */
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type Registry as PromRegistry,
  Registry,
} from "prom-client";
import type { QueueStats } from "../db/index.ts";
import { packageVersion } from "../package-root.ts";

export interface MetricSources {
  queue: () => Promise<QueueStats>;
  pool: () => Promise<{ total: number; idle: number; waiting: number }>;
  streams: () => number;
  /** Publishes waiting for a group commit's slot. */
  publishesWaiting: () => number;
}

export class Metrics {
  readonly registry: PromRegistry = new Registry();
  readonly rpcs: Counter<"rpc" | "protocol" | "code">;
  readonly publishes: Counter<"protocol" | "code">;
  readonly publishSeconds: Histogram<"protocol">;
  readonly deliveries: Counter<"platform" | "outcome">;
  /** The group commit's: publishes a batch, and its statement's time. */
  readonly publishBatchSize = new Histogram({
    name: "herald_publish_batch_size",
    help: "Publishes committed together in one group commit",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 500],
    registers: [this.registry],
  });
  readonly commitSeconds = new Histogram({
    name: "herald_publish_commit_duration_seconds",
    help: "A group commit's one statement, from taking a pooled connection to PostgreSQL's answer (its inserts, fan-out at commit and commit)",
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly claimSeconds: Histogram;
  readonly settleBatchSize: Histogram;
  readonly sendSeconds: Histogram<"platform">;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.rpcs = new Counter({
      name: "herald_rpcs_total",
      help: "Calls answered, by RPC, protocol (rest, connect, grpc, grpc-web) and outcome code",
      labelNames: ["rpc", "protocol", "code"],
      registers,
    });
    this.publishes = new Counter({
      name: "herald_publishes_total",
      help: "Notify calls answered, by protocol and outcome code (ok, invalid_argument, …)",
      labelNames: ["protocol", "code"],
      registers,
    });
    this.publishSeconds = new Histogram({
      name: "herald_publish_duration_seconds",
      help: "Time from a Notify call's arrival to its answer (after the commit)",
      labelNames: ["protocol"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.deliveries = new Counter({
      name: "herald_deliveries_total",
      help: "Push sends finished, by platform and outcome (sent, retry, failed, expired, disabled)",
      labelNames: ["platform", "outcome"],
      registers,
    });
    this.claimSeconds = new Histogram({
      name: "herald_delivery_claim_duration_seconds",
      help: "A worker's claim of due push deliveries: one statement's time, found or not",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.sendSeconds = new Histogram({
      name: "herald_push_send_duration_seconds",
      help: "A push send from its start (the message built) to its push service's answer, Web Push's encryption included, by platform",
      labelNames: ["platform"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    });
    this.settleBatchSize = new Histogram({
      name: "herald_delivery_settle_batch_size",
      help: "Push send outcomes recorded together in one statement",
      buckets: [1, 10, 50, 100, 200, 500, 1000],
      registers,
    });
    this.#gauges(sources, registers);
  }

  #gauges(sources: MetricSources, registers: PromRegistry[]): void {
    // Which process answered this scrape (several share one port; scrapes land on any), and
    // which build it runs.
    new Gauge({
      name: "herald_process_info",
      help: "1, labelled with the answering process's pid and Herald's version",
      labelNames: ["pid", "version"],
      registers,
    }).set({ pid: String(process.pid), version: packageVersion }, 1);
    // One query answers every queue gauge of a scrape.
    let stats: Promise<QueueStats> | undefined;
    const queue = () => {
      stats ??= sources.queue().finally(() => setTimeout(() => (stats = undefined), 1000));
      return stats;
    };
    const queueGauge = (name: string, help: string, pick: (s: QueueStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(pick(await queue()));
        },
      });
    queueGauge("herald_notifications_queued", "Published, not yet fanned out", (s) => s.queued);
    queueGauge(
      "herald_notifications_queued_oldest_age_seconds",
      "Age of the oldest notification waiting for its fan-out",
      (s) => s.oldestQueuedSeconds,
    );
    queueGauge("herald_delivery_queue_depth", "Push deliveries pending", (s) => s.pending);
    queueGauge("herald_delivery_queue_due", "Push deliveries due now", (s) => s.due);
    queueGauge(
      "herald_delivery_oldest_due_age_seconds",
      "How long the oldest due push delivery has waited past its due time",
      (s) => s.oldestDueSeconds,
    );
    new Gauge({
      name: "herald_publishes_waiting",
      help: "Publishes of this process waiting for a group commit's slot (they go in its next batch)",
      registers,
      collect() {
        this.set(sources.publishesWaiting());
      },
    });
    new Gauge({
      name: "herald_streams_connected",
      help: "Live streams (herald listen, the console) connected to this process",
      registers,
      collect() {
        this.set(sources.streams());
      },
    });
    new Gauge({
      name: "herald_db_pool_connections",
      help: "This process's database pool connections, by state (in_use, idle)",
      labelNames: ["state"],
      registers,
      async collect() {
        const p = await sources.pool();
        this.set({ state: "in_use" }, p.total - p.idle);
        this.set({ state: "idle" }, p.idle);
      },
    });
    new Gauge({
      name: "herald_db_pool_waiting",
      help: "Callers waiting for a database pool connection",
      registers,
      async collect() {
        this.set((await sources.pool()).waiting);
      },
    });
  }
}
