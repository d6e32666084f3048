/**
 * A machine's login and what it leaves behind. `herald logout`, and `herald login` to another
 * account or server, end this machine's stream device (registered by `herald listen`) and its
 * previous CLI token: the CLI forgets both, and a credential nobody holds must not go on
 * receiving, publishing or managing. Logging in again to the same account keeps the device.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newAccount } from "../helpers/accounts.ts";
import { cliFor, configFile, devicesListening, home } from "../helpers/cli.ts";
import { sql } from "../helpers/db.ts";
import { notify, ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { cli, loggedIn } = cliFor(() => server);

const saved = (h: string) => JSON.parse(readFileSync(configFile(h), "utf8"));

/** Registers this HOME's stream device: one `herald listen` that ends after one notification. */
async function listenOnce(h: string, topic: string): Promise<string> {
  const listening = cli(["listen", "--topic", topic, "--count", "1"], { home: h });
  await devicesListening(server, topic);
  await notify(server, { title: "hello", topic });
  const done = await listening;
  expect(done.code, done.stderr).toBe(0);
  return saved(h).devices[0].id as string;
}

async function deviceRow(id: string) {
  const [row] = await sql<{ signed_out: boolean; account_id: string }>(
    server.databaseUrl,
    "select signed_out_at is not null as signed_out, account_id from device where id = $1",
    [id],
  );
  return row;
}

async function liveCliTokens(email: string) {
  const [row] = await sql<{ live: number }>(
    server.databaseUrl,
    `select count(*)::int as live from cli_token t join account a on a.id = t.account_id
      where a.email = $1 and t.revoked_at is null and t.kind = 'cli'`,
    [email],
  );
  return row?.live ?? 0;
}

describe("logout", () => {
  it("signs this machine's stream device out with its token, and says so", async () => {
    const h = await loggedIn();
    const device = await listenOnce(h, "logout-device");
    const out = await cli(["logout"], { home: h });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(
      `logged out; signed out this machine's stream device ${device} (owner@example.com's)`,
    );
    expect(saved(h)).not.toHaveProperty("devices");
    expect(await deviceRow(device)).toMatchObject({ signed_out: true });
    // It no longer listens: another listen needs a login first.
    const again = await cli(["listen", "--topic", "logout-device", "--count", "1"], { home: h });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("not logged in");
  });
});

describe("login to another account", () => {
  it("ends the first account's device and token; listen then receives the new account's alone", async () => {
    const h = await loggedIn();
    const first = await listenOnce(h, "switch-first");
    expect((await cli(["projects", "use", "default"], { home: h })).code).toBe(0);
    const before = await liveCliTokens("owner@example.com");
    const other = await newAccount(server, "switcher@example.com");
    const login = await cli(["login", "--email", other.email, "--password-stdin"], {
      home: h,
      stdin: `${other.password}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain("logged in as switcher@example.com");
    expect(login.stdout).toContain(
      `signed out this machine's stream device ${first} (owner@example.com's)`,
    );
    expect(login.stdout).toMatch(
      /revoked this machine's previous token hc_\S{4}… \(owner@example.com's\)/,
    );
    expect(await deviceRow(first)).toMatchObject({ signed_out: true });
    expect(await liveCliTokens("owner@example.com")).toBe(before - 1);
    // The project in use was the other account's: it is not carried over.
    expect(saved(h)).not.toHaveProperty("project");
    expect(saved(h)).not.toHaveProperty("devices");

    // The owner's notification to the topic must not reach this machine any more.
    const listening = cli(["listen", "--topic", "switch-later", "--count", "1", "--json"], {
      home: h,
    });
    await devicesListening(server, "switch-later");
    await notify(server, { title: "the owner's", topic: "switch-later" });
    const mine = await cli(["notify", "the switcher's", "--topic", "switch-later"], { home: h });
    expect(mine.code, mine.stderr).toBe(0);
    const heard = await listening;
    expect(heard.code, heard.stderr).toBe(0);
    expect(JSON.parse(heard.stdout).title).toBe("the switcher's");
    expect(await deviceRow(saved(h).devices[0].id)).toMatchObject({ signed_out: false });
  });
});

describe("login again to the same account", () => {
  it("keeps this machine's device, and revokes the token it replaces", async () => {
    const h = await loggedIn();
    const device = await listenOnce(h, "relogin");
    const oldToken = saved(h).token as string;
    const before = await liveCliTokens("owner@example.com");
    const again = await cli(["login", "--email", "owner@example.com", "--password-stdin"], {
      home: h,
      stdin: `${ownerPassword}\n`,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(saved(h).devices.map((d: { id: string }) => d.id)).toEqual([device]);
    expect(await deviceRow(device)).toMatchObject({ signed_out: false });
    // One token for this machine, not two of the same name.
    expect(await liveCliTokens("owner@example.com")).toBe(before);
    const stale = await cli(["whoami"], { home: h, env: { HERALD_TOKEN: oldToken } });
    expect(stale.code).toBe(3);
  });
});

describe("login when the previous login's server is gone", () => {
  it("says what it could not end, on standard error, and logs in", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const { port } = closed.address() as { port: number };
    await new Promise((r) => closed.close(r));
    const h = home();
    mkdirSync(dirname(configFile(h)), { recursive: true });
    const device = { id: "01a25029-0000-7000-8000-000000000000", credential: "hd_gone" };
    const gone = {
      url: `http://127.0.0.1:${port}`,
      token: "hc_gonetoken",
      email: "x@gone",
      device,
    };
    writeFileSync(configFile(h), JSON.stringify({ ...gone, project: "payments" }));
    const login = await cli(["login", "--email", "owner@example.com", "--password-stdin"], {
      home: h,
      stdin: `${ownerPassword}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(
      `warning: could not sign out this machine's stream device ${device.id} (x@gone's): `,
    );
    expect(login.stderr).toContain(
      "warning: could not revoke this machine's previous token hc_gone… (x@gone's): ",
    );
    expect(saved(h)).toMatchObject({ url: server.url, email: "owner@example.com" });
    // A device saved before devices had their server (`device`) was the login's, and went with it.
    expect(saved(h)).not.toHaveProperty("device");
    expect(saved(h)).not.toHaveProperty("devices");
    expect(saved(h)).not.toHaveProperty("project");
  });
});
