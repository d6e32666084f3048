/**
 * Accounts a person can manage (issue 12, item 6): expiry dates on API keys and CLI tokens
 * (optional, listed, enforced), deleting an account with all its data behind a deliberate
 * confirmation, and an owner's password reset that ends the other console sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountRepository } from "../../src/db/repositories/accounts.ts";
import { SetupLinkRepository } from "../../src/db/repositories/setup-links.ts";
import { newAccount, pushDevice } from "../helpers/accounts.ts";
import { cliFor, home } from "../helpers/cli.ts";
import { sql, withDeadline } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { notify, ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ signupEnabled: true, credentialCacheMs: 0 });
});
afterAll(async () => server.close());
const { cli } = cliFor(() => server);

const call = async (path: string, token: string, json: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify(json),
  });
  return { status: res.status, json: await body(res) };
};
const soon = () => new Date(Date.now() + 3_600_000).toISOString();

describe("expiry dates", () => {
  it("an API key may expire: listed with its date, refused once past it", async () => {
    const owner = await newAccount(server, "keys-expiry@example.com");
    const projects = await body(
      await fetch(`${server.url}/v1/projects`, {
        headers: { authorization: `Bearer ${owner.token}` },
      }),
    );
    const projectId = projects.projects[0].id as string;
    const past = await call(`/v1/projects/${projectId}/api-keys`, owner.token, {
      name: "old",
      expires_at: "2020-01-01T00:00:00Z",
    });
    expect(past.status).toBe(400);
    expect(past.json.errors[0].field).toBe("expires_at");

    const expiresAt = soon();
    const created = await call(`/v1/projects/${projectId}/api-keys`, owner.token, {
      name: "ci",
      expires_at: expiresAt,
    });
    expect(created.status).toBe(201);
    expect(Date.parse(created.json.api_key.expires_at)).toBe(Date.parse(expiresAt));
    const key = created.json.secret as string;
    expect(
      (await notify(server, { title: "before" }, { authorization: `Bearer ${key}` })).status,
    ).toBe(202);

    await sql(
      server.databaseUrl,
      "update api_key set expires_at = now() - interval '1 second' where id = $1",
      [created.json.api_key.id],
    );
    const refused = await notify(server, { title: "after" }, { authorization: `Bearer ${key}` });
    expect(refused.status).toBe(401);
    expect(refused.json.code).toBe("unauthenticated");
  });

  it("a CLI login may expire: herald login --expires, shown by herald tokens list", async () => {
    const h = home();
    const login = await cli(
      ["login", "--email", "owner@example.com", "--password-stdin", "--expires", "30d"],
      {
        home: h,
        stdin: `${ownerPassword}\n`,
      },
    );
    expect(login.code, login.stderr).toBe(0);
    const list = await cli(["tokens", "list", "--json"], { home: h });
    expect(list.code, list.stderr).toBe(0);
    const mine = (JSON.parse(list.stdout) as { current: boolean; expires_at: string }[]).find(
      (t) => t.current,
    );
    const days = (Date.parse(mine?.expires_at as string) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    const human = await cli(["tokens", "list"], { home: h });
    expect(human.stdout.split("\n")[0]).toMatch(
      /ID\s+NAME\s+MADE BY\s+TOKEN\s+LAST USED\s+EXPIRES\s+REVOKED/,
    );

    const created = await cli(["keys", "create", "short-lived", "--expires", "12h", "--json"], {
      home: h,
    });
    expect(created.code, created.stderr).toBe(0);
    expect(Date.parse(JSON.parse(created.stdout).expires_at) - Date.now()).toBeGreaterThan(
      11.9 * 3_600_000,
    );
    const bad = await cli(["keys", "create", "x", "--expires", "yesterday"], { home: h });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--expires "yesterday": give a duration/);

    await sql(
      server.databaseUrl,
      "update cli_token set expires_at = now() - interval '1 second' where expires_at is not null",
    );
    const after = await cli(["projects", "list"], { home: h });
    expect(after.code).not.toBe(0);
    expect(after.stderr).toMatch(/expired or revoked/);
  });

  it("a device login carries the expiry it asked for to the token it mints", async () => {
    const owner = await newAccount(server, "device-expiry@example.com");
    const start = await call("/v1/auth/device", "", { token_name: "laptop", expires_at: soon() });
    expect(start.status).toBe(200);
    const approve = await call("/v1/auth/device/approve", owner.token, {
      user_code: start.json.user_code,
    });
    expect(approve.status).toBe(200);
    const poll = await call("/v1/auth/device/token", "", { device_code: start.json.device_code });
    expect(poll.json.status).toBe("approved");
    const [row] = await sql<{ expires_at: Date }>(
      server.databaseUrl,
      "select expires_at from cli_token where name = 'laptop'",
    );
    expect(row?.expires_at.getTime()).toBeGreaterThan(Date.now());
  });
});

describe("deleting an account", () => {
  it("needs the email typed out and the password, and never takes the owner's account", async () => {
    const a = await newAccount(server, "careful@example.com");
    const wrongEmail = await call("/v1/account/delete", a.token, {
      confirm_email: "someone@example.com",
      password: a.password,
    });
    expect(wrongEmail.status).toBe(400);
    expect(wrongEmail.json.errors).toEqual([
      { field: "confirm_email", message: "is not this account's email" },
    ]);
    const wrongPassword = await call("/v1/account/delete", a.token, {
      confirm_email: a.email,
      password: "not the password at all",
    });
    expect(wrongPassword.status).toBe(403);
    expect(wrongPassword.json.errors[0].field).toBe("password");

    const ownerLogin = await call("/v1/auth/login", "", {
      email: "owner@example.com",
      password: ownerPassword,
    });
    const owner = await call("/v1/account/delete", ownerLogin.json.token, {
      confirm_email: "owner@example.com",
      password: ownerPassword,
    });
    expect(owner.status).toBe(409);
    expect(owner.json.code).toBe("failed_precondition");
    expect((await notify(server, { title: "owner still here" })).status).toBe(202);
  });

  it("deletes everything the account holds; its credentials stop working; others are untouched", async () => {
    const a = await newAccount(server, "leaving@example.com");
    const device = await pushDevice(server, a, "ios", {
      case: "pushToken",
      value: "cd".repeat(32),
    });
    const ids: string[] = [];
    for (const title of ["one", "two"]) {
      const res = await notify(server, { title }, { authorization: `Bearer ${a.token}` });
      expect(res.status).toBe(202);
      ids.push(res.json.id as string);
    }
    const [{ id: accountId } = { id: "" }] = await sql<{ id: string }>(
      server.databaseUrl,
      "select id from account where email = $1",
      [a.email],
    );
    const h = home();
    const login = await cli(["login", "--email", a.email, "--password-stdin"], {
      home: h,
      stdin: `${a.password}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const noConfirm = await cli(["account", "delete"], { home: h });
    expect(noConfirm.code).toBe(2);
    expect(noConfirm.stderr).toMatch(/--confirm EMAIL/);

    const deleted = await cli(
      ["account", "delete", "--confirm", a.email, "--password-stdin", "--json"],
      {
        home: h,
        stdin: `${a.password}\n`,
      },
    );
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({
      deleted: true,
      email: a.email,
      notifications_deleted: 2,
    });

    for (const table of ["project", "device", "cli_token", "usage_purged", "device_login"]) {
      const rows = await sql(server.databaseUrl, `select 1 from ${table} where account_id = $1`, [
        accountId,
      ]);
      expect(rows, table).toEqual([]);
    }
    expect(
      await sql(server.databaseUrl, "select 1 from account where id = $1", [accountId]),
    ).toEqual([]);
    const refused = await notify(server, { title: "gone" }, { authorization: `Bearer ${a.token}` });
    expect(refused.status).toBe(401);
    const deviceCall = await call("/v1/device/sign-out", device.credential, {});
    expect(deviceCall.status).toBe(401);
    // The saved login went with it.
    expect((await cli(["whoami"], { home: h })).code).not.toBe(0);
    // The owner's account and its notifications are all there.
    const ownerRows = await sql(
      server.databaseUrl,
      "select 1 from account where email = 'owner@example.com'",
    );
    expect(ownerRows).toHaveLength(1);
  });
  it("is not cut by the serving processes' statement deadline, however long its cascade takes", async () => {
    const a = await newAccount(server, "slow-leaver@example.com");
    const db = server.databaseUrl;
    // This account's deletion outlasts the deadline, as millions of deliveries cascading would.
    await sql(
      db,
      `create function test_slow_delete() returns trigger language plpgsql as $$
       begin perform pg_sleep(1); return old; end $$;
       create trigger test_slow_delete before delete on account for each row
         when (old.email = 'slow-leaver@example.com') execute function test_slow_delete()`,
    );
    const orm = await withDeadline(db);
    try {
      const [{ id } = { id: "" }] = await sql<{ id: string }>(
        db,
        "select id from account where email = $1",
        [a.email],
      );
      await new AccountRepository(orm).delete(id);
      expect(await sql(db, "select id from account where id = $1", [id])).toEqual([]);
      // The deadline is back for the connection's next statement.
      await expect(orm.em.getConnection().execute("select pg_sleep(1)")).rejects.toMatchObject({
        code: "57014",
      });
    } finally {
      await orm.close();
      await sql(db, "drop trigger test_slow_delete on account; drop function test_slow_delete()");
    }
  });
});

describe("the owner's password reset", () => {
  it("ends the other console sessions (npm run owner:reset-password prints the link)", async () => {
    const session = await fetch(`${server.url}/v1/auth/session`, {
      method: "POST",
      headers: { origin: server.url },
      body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
    });
    expect(session.status).toBe(200);
    const [{ id: ownerId } = { id: "" }] = await sql<{ id: string }>(
      server.databaseUrl,
      "select id from account where email = 'owner@example.com'",
    );
    const token = await new SetupLinkRepository(server.orm).create(ownerId);
    const reset = await call("/v1/account/setup", "", { token, password: "a brand new password" });
    expect(reset.status).toBe(200);
    const open = await sql(
      server.databaseUrl,
      "select 1 from cli_token where account_id = $1 and kind = 'session' and revoked_at is null",
      [ownerId],
    );
    expect(open).toHaveLength(1); // the session the reset itself started
    await sql(server.databaseUrl, "select 1");
  });
});
