/**
 * Builds the Fastify application: every surface, every interceptor, every store, wired from the
 * configuration and the database handle it is given. It never listens: main.ts does, and tests
 * build the same app on a port of their choosing.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { createContextValues } from "@connectrpc/connect";
import Fastify, {
  type FastifyInstance,
  type FastifyServerFactory,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import { AccountService } from "../gen/herald/v1/account_service_pb.ts";
import { ApiKeyService } from "../gen/herald/v1/api_key_service_pb.ts";
import { AuthService } from "../gen/herald/v1/auth_service_pb.ts";
import { DeviceService } from "../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../gen/herald/v1/inbox_service_pb.ts";
import { NotifyService } from "../gen/herald/v1/notify_service_pb.ts";
import { ProjectService } from "../gen/herald/v1/project_service_pb.ts";
import type { Config } from "./config.ts";
import type { Orm } from "./db/orm.ts";
import type { Sender } from "./delivery/senders/sender.ts";
import { DeliveryStore } from "./delivery/store.ts";
import { StreamHub } from "./delivery/stream-hub.ts";
import { DeliveryWorker } from "./delivery/worker.ts";
import type { TokenKeyRing } from "./domain/token-crypto.ts";
import { registerConnect } from "./server/connect.ts";
import { clientAddressKey, requestIdKey } from "./server/context.ts";
import { createAuthInterceptor } from "./server/interceptors/auth.ts";
import { createLoggingInterceptor } from "./server/interceptors/logging.ts";
import { createRateLimitInterceptor } from "./server/interceptors/rate-limit.ts";
import { createValidateInterceptor } from "./server/interceptors/validate.ts";
import { LoginLimiter } from "./server/login-limiter.ts";
import { createPolyglotServer, type Handler } from "./server/polyglot.ts";
import { problemFor, problemOf } from "./server/problem.ts";
import { restCaptureInterceptor } from "./server/rest-shim.ts";
import { TokenBucketLimiter } from "./server/token-bucket.ts";
import { createAccountService } from "./services/account-service.ts";
import { createApiKeyService } from "./services/api-key-service.ts";
import { createAuthService } from "./services/auth-service.ts";
import { createDeviceService } from "./services/device-service.ts";
import { createInboxService } from "./services/inbox-service.ts";
import { createNotifyService, notifyRules } from "./services/notify-service.ts";
import { createProjectService } from "./services/project-service.ts";
import { AccountStore } from "./store/accounts.ts";
import { CredentialStore } from "./store/credentials.ts";
import { DeviceLoginStore } from "./store/device-logins.ts";
import { DeviceStore } from "./store/devices.ts";
import { KeyStore } from "./store/keys.ts";
import { NotificationStore } from "./store/notifications.ts";
import { RetentionStore } from "./store/retention.ts";
import { UsageStore } from "./store/usage.ts";

export interface AppDeps {
  config: Config;
  orm: Orm;
  /** Seals push tokens at rest. */
  tokenKeys: TokenKeyRing;
  /** One sender per push platform (see delivery/senders). */
  senders: readonly Sender[];
  logger?: FastifyServerOptions["logger"];
}

export async function buildApp({
  config,
  orm,
  tokenKeys,
  senders,
  logger,
}: AppDeps): Promise<FastifyInstance> {
  const shutdown = new AbortController();
  const trust = config.trustProxy;
  const app = Fastify({
    logger: logger ?? { level: config.logLevel },
    // One port, HTTP/1.1 and h2c. Fastify's types know one server kind at a time; both kinds of
    // request reach the same handler, which Fastify and Connect support.
    serverFactory: ((handler: Handler) =>
      createPolyglotServer(handler, {
        keepAliveTimeoutMs: 72_000,
      }) as unknown as Server) as unknown as FastifyServerFactory,
    bodyLimit: config.bodyLimitBytes,
    genReqId: () => `req_${randomBytes(9).toString("base64url")}`,
    // One line per call comes from the logging interceptor instead.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: "idle",
    // A hop count trusts that many proxies nearest to us (what proxy-addr does for a number).
    trustProxy: typeof trust === "number" ? (_address: string, hop: number) => hop < trust : trust,
    return503OnClosing: true,
  });

  const credentials = new CredentialStore(orm, config.credentialCacheMs, app.log);
  const notifications = new NotificationStore(orm);
  const accounts = new AccountStore(orm);
  const keys = new KeyStore(orm);
  const deviceLogins = new DeviceLoginStore(orm);
  const usage = new UsageStore(orm);
  const devices = new DeviceStore(orm, tokenKeys);
  const loginLimiter = new LoginLimiter(config);
  const deliveries = new DeliveryStore(orm, config.deliveryLeaseSeconds);
  const hub = new StreamHub(orm.config.get("clientUrl") as string, deliveries, app.log);
  const worker = new DeliveryWorker({
    store: deliveries,
    devices,
    senders: new Map(senders.map((s) => [s.platform, s])),
    log: app.log,
    maxInFlight: config.deliveryConcurrency,
    // Under the lease, so that a send still outstanding here is never claimed by another worker.
    sendTimeoutMs: Math.min(10_000, (config.deliveryLeaseSeconds * 1000) / 2),
  });
  for (const s of senders) {
    if (s.unconfigured) app.log.warn({ platform: s.platform }, s.unconfigured);
  }
  const limiter = new TokenBucketLimiter(config.rateLimitBurst, config.rateLimitPerSecond);

  app.addHook("onRequest", async (req, reply) => {
    reply.header("request-id", req.id);
  });
  // Every route's method and path pattern, so that a known path called with another method is
  // 405 with `Allow` rather than 404.
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook("onRoute", (route) => {
    const pattern = new RegExp(
      `^${route.url
        .split("/")
        .map((part) =>
          part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
        )
        .join("/")}$`,
    );
    for (const method of [route.method].flat()) routes.push({ method, pattern });
  });
  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split("?")[0] ?? "";
    const allow = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    const p =
      allow.length > 0
        ? problemOf(
            "method_not_allowed",
            `${path} does not take ${req.method}; it takes ${allow.join(", ")}`,
            req.id,
          )
        : problemOf("not_found", `no route for ${req.method} ${req.url}`, req.id);
    if (allow.length > 0) reply.header("allow", allow.join(", "));
    return reply.code(p.status).type("application/problem+json").send(JSON.stringify(p.body));
  });
  app.setErrorHandler(async (err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const p =
      err.code === "FST_ERR_CTP_BODY_TOO_LARGE"
        ? problemOf(
            "payload_too_large",
            `the body must be at most ${config.bodyLimitBytes} bytes`,
            req.id,
          )
        : err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500
          ? problemOf("invalid_argument", err.message, req.id)
          : problemFor(err, req.id);
    if (p.status >= 500) req.log.error({ err }, "request failed");
    return reply
      .code(p.status)
      .headers(p.headers)
      .type("application/problem+json")
      .send(JSON.stringify(p.body));
  });

  await registerConnect(app, {
    routes: (router) => {
      router.service(
        NotifyService,
        createNotifyService({
          store: notifications,
          deliveries,
          onPublished: () => worker.wake(),
          accounts,
          usage,
          config,
        }),
      );
      router.service(AccountService, createAccountService(accounts, usage, config));
      router.service(
        AuthService,
        createAuthService({
          accounts,
          keys,
          deviceLogins,
          credentials,
          limiter: loginLimiter,
          config,
        }),
      );
      router.service(ProjectService, createProjectService(accounts));
      router.service(ApiKeyService, createApiKeyService(accounts, keys, credentials));
      router.service(
        DeviceService,
        createDeviceService({
          devices,
          deliveries,
          onAddressed: (id) => {
            worker.wake();
            void hub.announce([id]).catch((err: unknown) => app.log.warn({ err }, "announce"));
          },
          accounts,
          credentials,
          limiter: loginLimiter,
        }),
      );
      router.service(
        InboxService,
        createInboxService({
          deliveries,
          devices,
          notifications,
          hub,
          keepaliveMs: config.streamKeepaliveMs,
        }),
      );
    },
    interceptors: [
      restCaptureInterceptor,
      createLoggingInterceptor(app.log),
      createAuthInterceptor(credentials),
      createRateLimitInterceptor(limiter),
      createValidateInterceptor(notifyRules),
    ],
    contextValues: (req) =>
      createContextValues().set(requestIdKey, req.id).set(clientAddressKey, req.ip),
    readMaxBytes: config.bodyLimitBytes,
    shutdownSignal: shutdown.signal,
  });

  // Where a device login's verification_uri points: there is no web console yet, so it says how
  // to approve from a signed-in CLI.
  app.get("/device", async (req, reply) => {
    const code = (req.query as { user_code?: string }).user_code ?? "<CODE>";
    return reply
      .type("text/plain; charset=utf-8")
      .send(
        `To sign in that device, approve its code from a machine where you are signed in:\n\n` +
          `  herald login --approve ${code}\n\n(or call AuthService.ApproveLogin with your CLI token)\n`,
      );
  });

  // In-flight calls get a grace period to finish; then whatever still runs (streams) is cut.
  app.addHook("preClose", async () => {
    setTimeout(() => shutdown.abort(), config.shutdownGraceMs).unref();
  });
  // Retention runs where the worker runs: shortly after start, then every hour.
  const retention = new RetentionStore(orm);
  let purging: Promise<void> | undefined;
  const purge = () => {
    purging ??= retention
      .purge(config.retentionDays)
      .then((purged) => {
        if (purged.notifications + purged.idempotencyRecords + purged.deviceLogins > 0)
          app.log.info({ ...purged, retention_days: config.retentionDays }, "retention purge");
      })
      .catch((err: unknown) => app.log.warn({ err }, "retention purge failed"))
      .finally(() => {
        purging = undefined;
      });
  };
  const purgeTimers: NodeJS.Timeout[] = [];
  app.addHook("onReady", async () => {
    await hub.start();
    if (config.workerEnabled) {
      worker.start();
      purgeTimers.push(setTimeout(purge, 10_000).unref(), setInterval(purge, 3_600_000).unref());
    }
  });
  app.addHook("onClose", async () => {
    for (const t of purgeTimers) clearTimeout(t);
    await purging;
    await worker.stop();
    await hub.close();
    await Promise.all(senders.map((s) => s.close()));
    await credentials.drain();
  });
  return app;
}
