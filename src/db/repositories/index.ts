/** Every repository of the persistence wing, over one ORM. */
import type { Limits } from "../../domain/limits.ts";
import type { Log } from "../../domain/log.ts";
import type { PushTokenKeyRing } from "../../domain/push-token-crypto.ts";
import type { Orm } from "../orm.ts";
import { type GroupCommitOptions, GroupCommitter } from "../queue/group-commit.ts";
import { AccountRepository } from "./accounts.ts";
import { ApiKeyRepository } from "./api-keys.ts";
import { CliTokenRepository } from "./cli-tokens.ts";
import { CredentialVerifier } from "./credential-verifier.ts";
import { DeliveryRepository } from "./deliveries.ts";
import { DeviceLoginRepository } from "./device-logins.ts";
import { DeviceRepository } from "./devices.ts";
import { HealthRepository } from "./health.ts";
import { NotificationRepository } from "./notifications.ts";
import { OpenCallRepository } from "./open-calls.ts";
import { PairingCodeRepository } from "./pairing-codes.ts";
import { ProjectRepository } from "./projects.ts";
import { QuotaLedger } from "./quota.ts";
import { RetentionRepository } from "./retention.ts";
import { SetupLinkRepository } from "./setup-links.ts";
import { UsageRepository } from "./usage.ts";
import { WebhookRepository } from "./webhooks.ts";

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
