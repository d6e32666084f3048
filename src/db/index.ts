/** Every repository of the persistence wing, over one ORM. */
import type { Limits } from "../domain/limits.ts";
import type { Log } from "../domain/log.ts";
import type { PushTokenKeyRing } from "../domain/push-token-crypto.ts";
import { type GroupCommitOptions, GroupCommitter } from "./notifications/group-commit.ts";
import type { Orm } from "./orm.ts";
import { QuotaLedger } from "./policies/quota.ts";
import { AccountRepository } from "./repositories/accounts.ts";
import { ApiKeyRepository } from "./repositories/api-keys.ts";
import { CliTokenRepository } from "./repositories/cli-tokens.ts";
import { CredentialVerifier } from "./repositories/credential-verifier.ts";
import { DeliveryRepository } from "./repositories/deliveries.ts";
import { DeviceLoginRepository } from "./repositories/device-logins.ts";
import { DeviceRepository } from "./repositories/devices.ts";
import { HealthRepository } from "./repositories/health.ts";
import { HookRepository } from "./repositories/hooks.ts";
import { NotificationRepository } from "./repositories/notifications.ts";
import { OpenCallRepository } from "./repositories/open-calls.ts";
import { PairingCodeRepository } from "./repositories/pairing-codes.ts";
import { ProjectRepository } from "./repositories/projects.ts";
import { RetentionRepository } from "./repositories/retention.ts";
import { SetupLinkRepository } from "./repositories/setup-links.ts";
import { UsageRepository } from "./repositories/usage.ts";
import { WebhookRepository } from "./repositories/webhooks.ts";

export function createRepositories(
  orm: Orm,
  opts: {
    credentialCacheMs: number;
    tokenKeys: PushTokenKeyRing;
    log: Log;
    /** Publishes per account per calendar month (UTC). */
    monthlyQuota: number;
    /** Group-commit publishes (undefined: one commit per publish). */
    groupCommit?: GroupCommitOptions;
    /** The caps on what an account or project may make. */
    limits: Limits;
  },
) {
  return {
    accounts: new AccountRepository(orm),
    projects: new ProjectRepository(orm),
    apiKeys: new ApiKeyRepository(orm, opts.limits.apiKeysPerProject),
    cliTokens: new CliTokenRepository(orm, opts.limits.cliTokensPerAccount),
    credentials: new CredentialVerifier(orm, opts.credentialCacheMs, opts.log),
    deliveries: new DeliveryRepository(orm),
    deviceLogins: new DeviceLoginRepository(orm),
    devices: new DeviceRepository(orm, opts.tokenKeys, opts.limits.devicesPerAccount),
    health: new HealthRepository(orm),
    hooks: new HookRepository(orm, opts.tokenKeys, opts.limits.hooksPerProject),
    notifications: new NotificationRepository(
      orm,
      opts.groupCommit && new GroupCommitter(orm, opts.groupCommit),
    ),
    openCalls: new OpenCallRepository(orm),
    pairingCodes: new PairingCodeRepository(orm),
    quota: new QuotaLedger(orm, opts.monthlyQuota),
    retention: new RetentionRepository(orm),
    setupLinks: new SetupLinkRepository(orm),
    usage: new UsageRepository(orm),
    webhooks: new WebhookRepository(orm, opts.tokenKeys, opts.limits.webhooksPerProject),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;

// The front door: what the rest of the server uses of the persistence wing.
export { type DumpManifest, dumpTables, hasAccounts, loadTables } from "./backup.ts";
export type { DueDelivery } from "./deliveries/claim-due.ts";
export type { DueWork } from "./deliveries/due-probe.ts";
export { createDeliveryQueue, type DeliveryQueue } from "./deliveries/queue.ts";
export type { Outcome } from "./deliveries/settle.ts";
export type { QueueStats } from "./deliveries/stats.ts";
export { backlogPage } from "./deliveries/stream-backlog.ts";
export {
  claimDueWebhooks,
  type DueWebhook,
  settleWebhook,
  type WebhookCaps,
} from "./deliveries/webhook-outbox.ts";
export type { EmbeddedEvent } from "./embedded/running.ts";
export {
  attachEmbeddedPostgres,
  type EmbeddedDatabase,
  startEmbeddedPostgres,
} from "./embedded/server.ts";
export { startEmbedded } from "./embedded/start.ts";
export { isDatabaseUnavailable } from "./errors.ts";
export { migrations } from "./migrations/index.ts";
export type { DueClear } from "./notifications/acknowledgements.ts";
export { deliveryChannel } from "./notifications/fan-out.ts";
export { feedChannel, feedPayloadOf } from "./notifications/feed-news.ts";
export { type InboxNews, inboxChannel } from "./notifications/inbox-news.ts";
export type { CancelOutcome } from "./notifications/schedule.ts";
export { type Db, type Orm, openDatabase, servingStatementDeadlineMs } from "./orm.ts";
export { limitExceeded } from "./policies/caps.ts";
export type { QuotaLedger } from "./policies/quota.ts";
export { SharedBuckets, SharedRateLimiter, sharedFailureCounter } from "./policies/rate-limits.ts";
export { AccountRepository, type AccountRow } from "./repositories/accounts.ts";
export { ApiKeyRepository, type ApiKeyRow } from "./repositories/api-keys.ts";
export type { CliTokenRepository, CliTokenRow } from "./repositories/cli-tokens.ts";
export type { CredentialVerifier } from "./repositories/credential-verifier.ts";
export type { DeliveryRepository, DeviceDeliveryRow } from "./repositories/deliveries.ts";
export type { DeviceLoginRepository } from "./repositories/device-logins.ts";
export { DeviceRepository, type DeviceRow, deviceChannel } from "./repositories/devices.ts";
export type { CalledHook, HookRepository, HookRow } from "./repositories/hooks.ts";
export { type KeyCheck, settleKeyChecks } from "./repositories/key-checks.ts";
export type { NotificationRepository, PublishResult } from "./repositories/notifications.ts";
export type { OpenCall, OpenCallRepository } from "./repositories/open-calls.ts";
export type { PairingCodeRepository } from "./repositories/pairing-codes.ts";
export type { ProjectRepository, ProjectRow } from "./repositories/projects.ts";
export type { RetentionRepository } from "./repositories/retention.ts";
export { reencryptSecrets } from "./repositories/sealed-secrets.ts";
export { SetupLinkRepository } from "./repositories/setup-links.ts";
export type { UsageRepository } from "./repositories/usage.ts";
export type { WebhookEndpointRow, WebhookRepository } from "./repositories/webhooks.ts";
