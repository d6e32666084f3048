import type { MigrationObject } from "@mikro-orm/core";

type MigrationClass = MigrationObject["class"];

/** A migration's module holds its one class. */
const only = async (module: Promise<Record<string, unknown>>): Promise<MigrationClass> => {
  const exported = Object.values(await module);
  if (exported.length !== 1) throw new Error("a migration's module exports exactly one class");
  return exported[0] as MigrationClass;
};

/**
 * Every migration in order. Applied at start; never edited once committed. Each is loaded only
 * by a process that migrates (the supervisor, the operator's commands): a serving process counts
 * them for its readiness and never holds their code or MikroORM's migrator.
 */
export const migrations: { name: string; load: () => Promise<MigrationClass> }[] = [
  { name: "0001-initial", load: () => only(import("./0001-initial.ts")) },
  { name: "0002-credentials", load: () => only(import("./0002-credentials.ts")) },
  { name: "0003-devices", load: () => only(import("./0003-devices.ts")) },
  { name: "0004-deliveries", load: () => only(import("./0004-deliveries.ts")) },
  { name: "0005-retention", load: () => only(import("./0005-retention.ts")) },
  { name: "0006-console", load: () => only(import("./0006-console.ts")) },
  { name: "0007-expiry", load: () => only(import("./0007-expiry.ts")) },
  { name: "0008-rate-buckets", load: () => only(import("./0008-rate-buckets.ts")) },
  { name: "0009-quota-ledger", load: () => only(import("./0009-quota-ledger.ts")) },
  { name: "0010-schedules", load: () => only(import("./0010-schedules.ts")) },
  { name: "0011-webhooks", load: () => only(import("./0011-webhooks.ts")) },
  { name: "0012-acknowledgements", load: () => only(import("./0012-acknowledgements.ts")) },
  { name: "0013-clear-pushes", load: () => only(import("./0013-clear-pushes.ts")) },
  { name: "0014-responses", load: () => only(import("./0014-responses.ts")) },
  { name: "0015-webhook-fairness", load: () => only(import("./0015-webhook-fairness.ts")) },
  { name: "0016-account-limits", load: () => only(import("./0016-account-limits.ts")) },
  { name: "0017-project-escalations", load: () => only(import("./0017-project-escalations.ts")) },
  { name: "0018-login-requester", load: () => only(import("./0018-login-requester.ts")) },
  { name: "0019-token-origin", load: () => only(import("./0019-token-origin.ts")) },
  { name: "0020-serving-processes", load: () => only(import("./0020-serving-processes.ts")) },
  { name: "0021-cancel-in-flight", load: () => only(import("./0021-cancel-in-flight.ts")) },
  { name: "0022-hooks", load: () => only(import("./0022-hooks.ts")) },
  { name: "0023-replace-key", load: () => only(import("./0023-replace-key.ts")) },
  { name: "0024-quiet-hours", load: () => only(import("./0024-quiet-hours.ts")) },
  { name: "0025-history-retention", load: () => only(import("./0025-history-retention.ts")) },
  { name: "0026-key-checks", load: () => only(import("./0026-key-checks.ts")) },
];

/** The migrations as MikroORM's migrator takes them, their classes loaded. */
export async function loadMigrations(): Promise<MigrationObject[]> {
  return Promise.all(migrations.map(async (m) => ({ name: m.name, class: await m.load() })));
}
