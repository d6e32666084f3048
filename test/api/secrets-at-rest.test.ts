/**
 * The database holds no secret in a recoverable form: after an account, keys, tokens and a
 * device login exist, a dump of every table contains none of the secrets or the password.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

async function post(path: string, payload: unknown, token?: string) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: JSON.stringify(payload),
  });
  expect(res.status, path).toBeLessThan(300);
  return (await res.json()) as Record<string, string> & { default_project_id: string };
}

describe("secrets at rest", () => {
  it("no table contains a key, a token, a device code or a password", async () => {
    const password = "pa55word-that-must-never-be-stored";
    const account = await post("/v1/accounts", { email: "audit@example.com", password });
    const { token } = await post("/v1/auth/login", { email: "audit@example.com", password });
    const { secret } = await post(
      `/v1/projects/${account.default_project_id}/api-keys`,
      { name: "ci" },
      token,
    );
    const device = await post("/v1/auth/device", { token_name: "box" });
    await post("/v1/auth/device/approve", { user_code: device.user_code }, token);
    const polled = await post("/v1/auth/device/token", { device_code: device.device_code });
    expect(polled.status).toBe("approved");

    const secrets = {
      password,
      cliToken: token,
      apiKey: secret,
      bootstrapKey: server.apiKey,
      deviceCode: device.device_code,
      deviceToken: polled.token,
    };
    const tables = await sql<{ tablename: string }>(
      server.databaseUrl,
      "select tablename from pg_tables where schemaname = 'public'",
    );
    expect(tables.map((t) => t.tablename)).toEqual(
      expect.arrayContaining(["account", "api_key", "cli_token", "device_login"]),
    );
    for (const { tablename } of tables) {
      const rows = await sql(server.databaseUrl, `select t::text as row from "${tablename}" t`);
      const dump = rows.map((r) => r.row).join("\n");
      for (const [name, value] of Object.entries(secrets)) {
        expect(value, name).toBeTruthy();
        expect(dump.includes(value as string), `${name} found in ${tablename}`).toBe(false);
        // Nor as the hex or base64 of its bytes.
        expect(dump.includes(Buffer.from(value as string).toString("hex")), name).toBe(false);
      }
    }
    const [row] = await sql<{ password_hash: string }>(
      server.databaseUrl,
      "select password_hash from account where email = 'audit@example.com'",
    );
    expect(row?.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});
