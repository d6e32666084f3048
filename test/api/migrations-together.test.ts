/**
 * Machines started together on one new database (a deployment of several, a compose file scaled
 * up, an upgrade rolled out at once) each migrate it on open. They take turns: every one opens,
 * and each migration is applied once. Before, all but one failed to start, on the catalog's
 * unique index (`duplicate key value violates unique constraint "pg_type_typname_nsp_index"`).
 */
import { randomBytes } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { createDatabaseIfMissing } from "../../src/db/embedded/server.ts";
import { loadMigrations } from "../../src/db/migrations/index.ts";
import { openDatabase } from "../../src/db/orm.ts";
import { sql } from "../helpers/db.ts";

describe("migrations on open", () => {
  it("are applied once when three open one new database at the same time", async () => {
    const server = inject("pgServerUrl");
    const name = `herald_t_together_${randomBytes(4).toString("hex")}`;
    await createDatabaseIfMissing(`${server}/postgres`, name);
    const url = `${server}/${name}`;
    const opened = await Promise.allSettled(
      [1, 2, 3].map(() => openDatabase({ url, poolSize: 2 })),
    );
    for (const o of opened) if (o.status === "fulfilled") await o.value.close();
    expect(opened.map((o) => (o.status === "rejected" ? String(o.reason) : "opened"))).toEqual([
      "opened",
      "opened",
      "opened",
    ]);
    const applied = await sql<{ name: string }>(url, "select name from herald_migrations");
    expect(applied).toHaveLength((await loadMigrations()).length);
    expect(new Set(applied.map((a) => a.name)).size).toBe(applied.length);
    await sql(`${server}/postgres`, `drop database ${name}`);
  });
});
