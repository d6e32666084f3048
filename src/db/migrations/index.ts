import type { MigrationObject } from "@mikro-orm/core";

/**
 * Every migration in order. Applied at start; never edited once committed. Each is loaded only
 * by a process that migrates (the supervisor, the operator's commands): a serving process counts
 * them for its readiness and never holds their code or MikroORM's migrator.
 */
export const migrations: { name: string; load: () => Promise<MigrationObject["class"]> }[] = [
  {
    name: "0001-initial",
    load: async () => (await import("./0001-initial.ts")).Migration0001Initial,
  },
  {
    name: "0002-credentials",
    load: async () => (await import("./0002-credentials.ts")).Migration0002Credentials,
  },
  {
    name: "0003-devices",
    load: async () => (await import("./0003-devices.ts")).Migration0003Devices,
  },
  {
    name: "0004-deliveries",
    load: async () => (await import("./0004-deliveries.ts")).Migration0004Deliveries,
  },
  {
    name: "0005-retention",
    load: async () => (await import("./0005-retention.ts")).Migration0005Retention,
  },
  {
    name: "0006-console",
    load: async () => (await import("./0006-console.ts")).Migration0006Console,
  },
  { name: "0007-expiry", load: async () => (await import("./0007-expiry.ts")).Migration0007Expiry },
  {
    name: "0008-rate-buckets",
    load: async () => (await import("./0008-rate-buckets.ts")).Migration0008RateBuckets,
  },
  {
    name: "0009-quota-ledger",
    load: async () => (await import("./0009-quota-ledger.ts")).Migration0009QuotaLedger,
  },
  {
    name: "0010-schedules",
    load: async () => (await import("./0010-schedules.ts")).Migration0010Schedules,
  },
  {
    name: "0011-webhooks",
    load: async () => (await import("./0011-webhooks.ts")).Migration0011Webhooks,
  },
  {
    name: "0012-acknowledgements",
    load: async () => (await import("./0012-acknowledgements.ts")).Migration0012Acknowledgements,
  },
  {
    name: "0013-clear-pushes",
    load: async () => (await import("./0013-clear-pushes.ts")).Migration0013ClearPushes,
  },
  {
    name: "0014-responses",
    load: async () => (await import("./0014-responses.ts")).Migration0014Responses,
  },
  {
    name: "0015-webhook-fairness",
    load: async () => (await import("./0015-webhook-fairness.ts")).Migration0015WebhookFairness,
  },
  {
    name: "0016-account-limits",
    load: async () => (await import("./0016-account-limits.ts")).Migration0016AccountLimits,
  },
  {
    name: "0017-project-escalations",
    load: async () =>
      (await import("./0017-project-escalations.ts")).Migration0017ProjectEscalations,
  },
  {
    name: "0018-login-requester",
    load: async () => (await import("./0018-login-requester.ts")).Migration0018LoginRequester,
  },
  {
    name: "0019-token-origin",
    load: async () => (await import("./0019-token-origin.ts")).Migration0019TokenOrigin,
  },
  {
    name: "0020-serving-processes",
    load: async () => (await import("./0020-serving-processes.ts")).Migration0020ServingProcesses,
  },
  {
    name: "0021-cancel-in-flight",
    load: async () => (await import("./0021-cancel-in-flight.ts")).Migration0021CancelInFlight,
  },
  { name: "0022-hooks", load: async () => (await import("./0022-hooks.ts")).Migration0022Hooks },
  {
    name: "0023-replace-key",
    load: async () => (await import("./0023-replace-key.ts")).Migration0023ReplaceKey,
  },
  {
    name: "0024-quiet-hours",
    load: async () => (await import("./0024-quiet-hours.ts")).Migration0024QuietHours,
  },
];

/** The migrations as MikroORM's migrator takes them, their classes loaded. */
export async function loadMigrations(): Promise<MigrationObject[]> {
  return Promise.all(migrations.map(async (m) => ({ name: m.name, class: await m.load() })));
}
