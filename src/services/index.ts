/** Every proto service's implementation, registered on a Connect router. */
import type { ConnectRouter } from "@connectrpc/connect";
import { AccountService } from "../../gen/herald/v1/account_service_pb.ts";
import { ApiKeyService } from "../../gen/herald/v1/api_key_service_pb.ts";
import { AuthService } from "../../gen/herald/v1/auth_service_pb.ts";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { HookService } from "../../gen/herald/v1/hook_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { ProjectService } from "../../gen/herald/v1/project_service_pb.ts";
import { WebhookService } from "../../gen/herald/v1/webhook_service_pb.ts";
import type { Config } from "../config.ts";
import type { DeliveryQueue, Repositories } from "../db/index.ts";
import type { StreamHub } from "../delivery/streams/hub.ts";
import type { Log } from "../domain/log.ts";
import type { LoginLimiter } from "../domain/login-limiter.ts";
import { createAccountService } from "./account-service.ts";
import { createApiKeyService } from "./api-key-service.ts";
import { createAuthService } from "./auth-service.ts";
import { createDeviceService } from "./device-service.ts";
import { createHookService } from "./hook-service.ts";
import { createInboxService } from "./inbox-service.ts";
import { createNotifyService } from "./notify-service.ts";
import { createProjectService } from "./project-service.ts";
import { createWebhookService } from "./webhook-service.ts";

/** The services Herald serves, for gRPC health and reflection. */
export const heraldServices = [
  NotifyService,
  AccountService,
  AuthService,
  ProjectService,
  ApiKeyService,
  DeviceService,
  InboxService,
  WebhookService,
  HookService,
] as const;

export interface ServiceDeps {
  config: Config;
  repos: Repositories;
  queue: DeliveryQueue;
  hub: StreamHub;
  limiter: LoginLimiter;
  log: Log;
  /** Work for the delivery worker was committed (a fan-out, or pushes due): wake this process's. */
  onPublished: () => void;
  webPushPublicKey: string | undefined;
}

export function registerServices(router: ConnectRouter, deps: ServiceDeps): void {
  const { config, repos, queue, hub, limiter, log, onPublished } = deps;
  router.service(
    NotifyService,
    createNotifyService({
      ...repos,
      config,
      // A question closed by its asker: its statement tells every stream to clear it, and its
      // waits hear at once (db/notifications/inbox-news.ts).
      cancel: (projectId, id) => queue.cancel(projectId, id),
      awaitNews: (id, ms, signal) => hub.awaitNews(id, ms, signal),
      watchFeed: (projectId, wake) => hub.feed.watch(projectId, wake),
      ending: hub.ending,
      // Hand it to this process's streams it will reach, and wake this process's worker if
      // there is work for it (a fan-out, or pushes to send).
      onPublished: (row, accountId, forWorker) => {
        if (forWorker) onPublished();
        const project = async () => (await repos.projects.get(accountId, row.project_id))?.name;
        void hub.handOver(row, accountId, project).catch((err: unknown) => {
          log.warn({ err }, "handing a notification to streams failed");
        });
      },
    }),
  );
  router.service(AccountService, createAccountService({ ...repos, limiter, config }));
  router.service(AuthService, createAuthService({ ...repos, limiter, config }));
  router.service(ProjectService, createProjectService(repos.projects));
  router.service(ApiKeyService, createApiKeyService(repos));
  router.service(
    DeviceService,
    createDeviceService({
      ...repos,
      limiter,
      webPushPublicKey: deps.webPushPublicKey,
      webPushEndpoints: { hosts: config.webPushHosts, allowPrivate: config.webPushAllowPrivate },
      // A test notification skips the fan-out: its transaction told the streams; tell the worker.
      onEnqueued: () => onPublished(),
    }),
  );
  router.service(
    WebhookService,
    createWebhookService({
      ...repos,
      allowPrivate: config.webhookAllowPrivate,
    }),
  );
  router.service(
    HookService,
    createHookService({ ...repos, publicUrl: config.publicUrl, mailDomain: config.smtp?.domain }),
  );
  router.service(
    InboxService,
    createInboxService({
      ...repos,
      queue,
      hub,
      keepaliveMs: config.streamKeepaliveMs,
      limits: config.limits,
      streamHeldIds: config.streamHeldIds,
      log,
    }),
  );
}
