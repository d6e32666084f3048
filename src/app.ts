/**
 * Builds the Fastify application from the configuration and the database handle it is given:
 * it composes the persistence wing, the use cases and the transport plugins, and implements
 * none of them. It never listens: main.ts does, and tests build the same app on a port of their
 * choosing.
 */
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
} from "fastify";
import { Health } from "../gen/grpc/health/v1/health_pb.ts";
import { NotifyService } from "../gen/herald/v1/notify_service_pb.ts";
import type { Config } from "./config.ts";
import type { Orm } from "./db/index.ts";
import {
  createDeliveryQueue,
  createRepositories,
  type DeliveryQueue,
  type Repositories,
  SharedBuckets,
  SharedRateLimiter,
  sharedFailureCounter,
} from "./db/index.ts";
import { RetentionTimer } from "./delivery/retention-timer.ts";
import type { Sender } from "./delivery/senders/sender.ts";
import { StreamHub } from "./delivery/streams/hub.ts";
import { WebhookWorker } from "./delivery/webhook-worker.ts";
import { DeliveryWorker } from "./delivery/worker.ts";
import { FailedAuthThrottle } from "./domain/failed-auth.ts";
import { LoginLimiter } from "./domain/login-limiter.ts";
import { domainRules } from "./domain/notify-rules.ts";
import type { PushTokenKeyRing } from "./domain/push-token-crypto.ts";
import { type RateLimiter, TokenBucketLimiter } from "./domain/token-bucket.ts";
import { Metrics } from "./observability/metrics.ts";
import { callContextValues } from "./server/call-context.ts";
import { registerHealthService } from "./server/grpc/health.ts";
import { registerReflection } from "./server/grpc/reflection.ts";
import type { UnarySpec } from "./server/grpc/unary.ts";
import { type InboundHookOptions, registerInboundHooks } from "./server/hooks/inbound.ts";
import { createAuthInterceptor } from "./server/interceptors/auth.ts";
import { createLoggingInterceptor } from "./server/interceptors/logging.ts";
import { createRateLimitInterceptor } from "./server/interceptors/rate-limit.ts";
import { replayedHeaderInterceptor } from "./server/interceptors/replayed-header.ts";
import { createSessionCookieInterceptor } from "./server/interceptors/session-cookie.ts";
import { createValidateInterceptor } from "./server/interceptors/validate.ts";
import { clientAddressOf, serverOptions } from "./server/options.ts";
import { registerConsole } from "./server/plugins/console.ts";
import { registerErrorDocs } from "./server/plugins/error-docs.ts";
import { registerErrorHandling } from "./server/plugins/errors.ts";
import { registerHealth } from "./server/plugins/health.ts";
import { registerLifecycle } from "./server/plugins/lifecycle.ts";
import { registerMcp } from "./server/plugins/mcp.ts";
import { registerMetrics } from "./server/plugins/metrics.ts";
import { registerConnect } from "./server/plugins/rpc.ts";
import { Readiness } from "./server/readiness.ts";
import { createHookIntake } from "./services/hook-intake.ts";
import { heraldServices, registerServices } from "./services/index.ts";

export interface AppDeps {
  config: Config;
  orm: Orm;
  /** Seals push tokens at rest. */
  tokenKeys: PushTokenKeyRing;
  /** One sender per push platform (see delivery/senders). */
  senders: readonly Sender[];
  /** Pino options for tests; or the process's own logger (serve.ts). */
  logger?: FastifyServerOptions["logger"];
  loggerInstance?: FastifyBaseLogger;
}

/** How publishes are committed: grouped (the default), or one commit each. */
function groupCommitOf(config: Config, metrics: Metrics, onFed: (projectIds: string[]) => void) {
  if (!config.groupCommit) return undefined;
  return {
    slots: config.groupCommitSlots,
    maxBatch: 500,
    fanOutAtCommit: config.fanOutAtCommit,
    onBatch: (size: number, seconds: number) => {
      metrics.publishBatchSize.observe(size);
      metrics.commitSeconds.observe(seconds);
    },
    onFed,
  };
}

/** A token bucket limit: shared through PostgreSQL by every process, or this one's own. */
function rateLimiter(
  app: FastifyInstance,
  orm: Orm,
  config: Config,
  burst: number,
  perSecond: number,
): RateLimiter {
  if (!config.rateLimitShared) return new TokenBucketLimiter(burst, perSecond);
  const shared = new SharedRateLimiter(orm, burst, perSecond);
  app.addHook("onClose", () => shared.close());
  return shared;
}

/** The per-credential and per-account buckets. */
function rateLimits(app: FastifyInstance, orm: Orm, config: Config) {
  const { accountRequestBurst, accountRequestsPerSecond } = config.limits;
  return createRateLimitInterceptor(
    rateLimiter(app, orm, config, config.rateLimitBurst, config.rateLimitPerSecond),
    rateLimiter(app, orm, config, accountRequestBurst, accountRequestsPerSecond),
  );
}

/** Failed-login throttles: shared through PostgreSQL with the rate limit, or this process's. */
function loginLimiter(orm: Orm, config: Config, addresses: FailedAuthThrottle): LoginLimiter {
  if (!config.rateLimitShared) return new LoginLimiter(config.loginFailuresPerAccount, addresses);
  return new LoginLimiter(config.loginFailuresPerAccount, addresses, undefined, (n, b, r) => {
    return new SharedBuckets(orm, n, b, r);
  });
}

/** Failed authentications per client address, counted across processes unless told not to. */
function failedAuthThrottle(orm: Orm, config: Config): FailedAuthThrottle {
  const counter = config.rateLimitShared ? sharedFailureCounter(orm) : undefined;
  return new FailedAuthThrottle(config.limits.failedAuthPerMinute, counter);
}

/** This process's delivery worker (HERALD_WORKER=0 runs none). */
function createWorker(
  deps: AppDeps,
  queue: DeliveryQueue,
  repos: Repositories,
  log: FastifyBaseLogger,
  metrics: Metrics,
): DeliveryWorker {
  const { config } = deps;
  return new DeliveryWorker({
    queue,
    devices: repos.devices,
    tokenKeys: deps.tokenKeys,
    senders: new Map(deps.senders.map((s) => [s.platform, s])),
    log,
    fanOutChunk: config.fanOutChunk,
    maxInFlight: config.deliveryConcurrency,
    perAccount: config.limits.pushInFlightPerAccount,
    // Under the lease, so that a send still outstanding here is never claimed by another.
    sendTimeoutMs: Math.min(10_000, (config.deliveryLeaseSeconds * 1000) / 2),
    onOutcome: (platform, outcome) => metrics.deliveries.inc({ platform, outcome }),
    onSent: (platform, seconds) => metrics.sendSeconds.observe({ platform }, seconds),
    onClaim: (seconds) => metrics.claimSeconds.observe(seconds),
    onSettle: (outcomes) => metrics.settleBatchSize.observe(outcomes),
    ackIntervalScale: config.ackIntervalScale,
    clock: config.workerClock,
  });
}

/** This process's webhook sender, beside its delivery worker. */
function createWebhookWorker(deps: AppDeps, orm: Orm, log: FastifyBaseLogger): WebhookWorker {
  const { config } = deps;
  return new WebhookWorker({
    db: () => orm.em.getConnection(),
    keys: deps.tokenKeys,
    log,
    leaseSeconds: config.deliveryLeaseSeconds,
    timeoutMs: config.limits.webhookDeadlineMs,
    caps: {
      perEndpoint: config.limits.webhooksInFlightPerEndpoint,
      perAccount: config.limits.webhooksInFlightPerAccount,
    },
    allowPrivate: config.webhookAllowPrivate,
    disableAfter: config.webhookDisableAfter,
    pollMs: 200,
    backoffScale: config.webhookBackoffScale,
  });
}

/** Where senders deliver to inbound hooks: `POST /v1/hooks/{id}`, and SMTP when configured. */
async function registerHookSurfaces(
  app: FastifyInstance,
  config: Config,
  hooks: Omit<InboundHookOptions, "contextValues" | "bodyLimit">,
): Promise<void> {
  const maxBytes = config.hookBodyLimitBytes;
  await registerInboundHooks(app, {
    ...hooks,
    contextValues: callContextValues,
    bodyLimit: maxBytes,
  });
  if (config.smtp) {
    // Loaded only where email is taken: smtp-server and MIME parsing cost a process megabytes.
    const { registerSmtp } = await import("./server/hooks/smtp.ts");
    registerSmtp(app, {
      ...hooks,
      ...config.smtp,
      host: config.host,
      maxBytes,
      perAddress: config.limits.smtpConnectionsPerAddress,
    });
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, orm, tokenKeys, senders } = deps;
  const app = Fastify(serverOptions(config, deps.logger, deps.loggerInstance));
  const shutdown = new AbortController();
  // Its sources are read when scraped, by which time the queue and the hub exist.
  const metrics = new Metrics({
    queue: () => queue.stats(),
    pool: () => queue.poolStats(),
    streams: () => hub.streamCount,
    publishesWaiting: () => repos.notifications.waiting,
  });
  const repos = createRepositories(orm, {
    ...config,
    tokenKeys,
    log: app.log,
    groupCommit: groupCommitOf(config, metrics, (ids) => hub.feed.tell(ids)),
  });
  app.addHook("onClose", () => repos.quota.close());
  app.addHook("onClose", () => repos.openCalls.close());
  const queue = createDeliveryQueue(orm, config.deliveryLeaseSeconds);
  const hub = new StreamHub(orm.config.get("clientUrl") as string, queue, app.log);
  const readiness = new Readiness(() => repos.health.problem());
  const failedAuth = failedAuthThrottle(orm, config);
  const worker = config.workerEnabled
    ? createWorker(deps, queue, repos, app.log, metrics)
    : undefined;

  app.addHook("onRequest", async (req, reply) => void reply.header("request-id", req.id));
  registerErrorHandling(app, config.bodyLimitBytes);
  const interceptors = [
    replayedHeaderInterceptor,
    createLoggingInterceptor(app.log, metrics),
    createSessionCookieInterceptor(config.publicUrl),
    createAuthInterceptor(repos.credentials, config.publicUrl, failedAuth),
    rateLimits(app, orm, config),
    createValidateInterceptor(domainRules),
  ];
  const unary = await registerConnect(app, {
    routes: (router) => {
      registerServices(router, {
        config,
        repos,
        queue,
        hub,
        limiter: loginLimiter(orm, config, failedAuth),
        log: app.log,
        onPublished: () => worker?.wake(true),
        webPushPublicKey: senders.find((s) => s.platform === "web" && !s.unconfigured)?.publicKey,
      });
      registerHealthService(router, {
        readiness,
        services: heraldServices.map((s) => s.typeName),
        alwaysServing: [Health.typeName],
        watchIntervalMs: config.healthWatchIntervalMs,
      });
      if (config.reflection) registerReflection(router, [...heraldServices, Health]);
    },
    interceptors,
    contextValues: callContextValues,
    clientAddress: clientAddressOf(config.trustProxy),
    readMaxBytes: config.bodyLimitBytes,
    shutdownSignal: shutdown.signal,
  });
  await registerHookSurfaces(app, config, {
    intake: createHookIntake({ hooks: repos.hooks, log: app.log }),
    notify: unary.get(`/${NotifyService.typeName}/Notify`) as UnarySpec,
    interceptors,
    shutdownSignal: shutdown.signal,
    failures: failedAuth,
  });
  registerConsole(app);
  registerHealth(app, readiness);
  registerMetrics(app, metrics, { host: config.host, port: config.metricsPort });
  registerErrorDocs(app);
  registerMcp(app, {
    credentials: repos.credentials,
    failures: failedAuth,
    publicUrl: config.publicUrl,
  });
  registerLifecycle(app, {
    hub,
    worker,
    webhooks: worker && createWebhookWorker(deps, orm, app.log),
    retention: worker && new RetentionTimer(repos.retention, config.retentionDays, app.log),
    senders,
    credentials: repos.credentials,
    shutdown,
    graceMs: config.shutdownGraceMs,
  });
  return app;
}
