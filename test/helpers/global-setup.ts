/**
 * One PostgreSQL for the whole run: the embedded one (so `npm test` needs no database service),
 * or the server named by DATABASE_URL. A template database is migrated once; every test file
 * clones its own database from it (test/helpers/db.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildServer } from "../../scripts/build-server.ts";
import { buildWeb } from "../../scripts/build-web.ts";
import { removeAbandoned } from "../../src/db/embedded/owner.ts";
import { createDatabaseIfMissing, startEmbeddedPostgres } from "../../src/db/embedded/server.ts";
import { openDatabase } from "../../src/db/orm.ts";
import { endingSignals, signalExitCode } from "../../src/ending-signals.ts";

declare module "vitest" {
  export interface ProvidedContext {
    pgServerUrl: string;
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject) {
  // The console as its sources are now: the browser tests and the console's routes serve it.
  await buildWeb();
  // The server as its sources are now: the tests that start `npm start` run the build.
  await buildServer();
  const template = `herald_template_${process.pid}`;
  let serverUrl: string;
  let stop = async () => {};
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = "";
    serverUrl = url.toString().replace(/\/$/, "");
  } else {
    // What an interrupted run left (Ctrl-C or SIGTERM end vitest with PostgreSQL stopped by its
    // exit hook, but its cluster's directory, 40 MB, stays; SIGKILL leaves both): gone now.
    await removeAbandoned(tmpdir(), "herald-test-pg-");
    const dir = mkdtempSync(join(tmpdir(), "herald-test-pg-"));
    // Throwaway cluster: durability off for speed (tests kill the server, never PostgreSQL).
    const pg = await startEmbeddedPostgres({
      dir,
      flags: ["-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=300"],
    });
    serverUrl = pg.serverUrl;
    // Vitest ends the run itself on SIGINT and SIGTERM, and its exit stops this PostgreSQL (the
    // exit hook of server.ts). Node's default for the other ending signals (a closed terminal,
    // Ctrl-\, the rest of ending-signals.ts) would end it with no exit hook run.
    for (const signal of endingSignals.filter((s) => s !== "SIGINT" && s !== "SIGTERM")) {
      process.once(signal, () => process.exit(signalExitCode(signal)));
    }
    stop = async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  await createDatabaseIfMissing(`${serverUrl}/postgres`, template);
  const orm = await openDatabase({
    url: `${serverUrl}/${template}`,
    poolSize: 1,
  });
  await orm.close();
  project.provide("pgServerUrl", serverUrl);
  project.provide("templateDatabase", template);
  return async () => {
    const pg = await import("pg");
    const client = new pg.default.Client({ connectionString: `${serverUrl}/postgres` });
    await client.connect();
    const dbs = await client.query<{ datname: string }>(
      "select datname from pg_database where datname like $1",
      [`herald_t_${process.pid}_%`],
    );
    for (const { datname } of dbs.rows)
      await client.query(`drop database if exists "${datname}" with (force)`);
    await client.query(`drop database if exists "${template}" with (force)`);
    await client.end();
    await stop();
  };
}
