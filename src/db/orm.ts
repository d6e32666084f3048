import { Migrator } from "@mikro-orm/migrations";
import { MikroORM } from "@mikro-orm/postgresql";
import { Account } from "./entities/account.ts";
import { ApiKey } from "./entities/api-key.ts";
import { CliToken } from "./entities/cli-token.ts";
import { DeviceLogin } from "./entities/device-login.ts";
import { Notification } from "./entities/notification.ts";
import { Project } from "./entities/project.ts";
import { migrations } from "./migrations/index.ts";

export type Orm = MikroORM;

export interface OpenOptions {
  url: string;
  poolSize: number;
  /**
   * How long a statement may wait for a row lock. A publish that waits on a concurrent duplicate
   * of its idempotency key gives up after this and answers 409 `idempotency_key_in_use`.
   */
  lockTimeoutMs: number;
}

/** Connects, applies pending migrations, and returns the ORM. Never a global: pass it down. */
export async function openDatabase(opts: OpenOptions): Promise<Orm> {
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    entities: [Account, Project, ApiKey, CliToken, DeviceLogin, Notification],
    extensions: [Migrator],
    migrations: {
      migrationsList: migrations,
      tableName: "herald_migrations",
      silent: true,
      snapshot: false,
    },
    pool: { min: 0, max: opts.poolSize },
    driverOptions: { options: `-c lock_timeout=${opts.lockTimeoutMs}` },
    allowGlobalContext: false,
    ensureDatabase: false,
  });
  await orm.migrator.up();
  return orm;
}
