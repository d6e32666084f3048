/**
 * `herald listen` as another server or another account than the saved login's (`--url`,
 * `HERALD_URL`, `HERALD_TOKEN`). Each stream device this machine registers is of one server and
 * one account: a listen uses the one of the server and account it listens as, and registers one
 * only where it has none. Before, the one saved device was presented everywhere: at another
 * server it was refused and forgotten (still signed in where it was made), and with another
 * account's token it received the saved login's notifications. `whoami` names the device the
 * next listen uses.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newAccount, type TestAccount } from "../helpers/accounts.ts";
import { cliFor, configFile, devicesListening } from "../helpers/cli.ts";
import { sql } from "../helpers/db.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

let first: TestServer;
let second: TestServer;
beforeAll(async () => {
  [first, second] = await Promise.all([
    startServer({ streamKeepaliveMs: 500 }),
    startServer({ streamKeepaliveMs: 500 }),
  ]);
});
afterAll(async () => Promise.all([first?.close(), second?.close()]));
const { cli, loggedIn } = cliFor(() => first);

interface Saved {
  devices?: { id: string; url: string; accountId?: string }[];
}
const saved = (h: string): Saved => JSON.parse(readFileSync(configFile(h), "utf8"));

/**
 * One `herald listen --count 1 --json` of `topic`, as `env` says, while `publish` sends to it:
 * what it received, and what it said on standard error.
 */
async function listenOnce(
  h: string,
  server: TestServer,
  topic: string,
  publish: () => Promise<unknown>,
  env: Record<string, string> = {},
) {
  const listening = cli(["listen", "--topic", topic, "--count", "1", "--json"], { home: h, env });
  await devicesListening(server, topic, 1);
  await publish();
  const done = await listening;
  expect(done.code, done.stderr).toBe(0);
  return { title: JSON.parse(done.stdout).title as string, stderr: done.stderr };
}

/** `herald whoami --json`, as `env` says. */
async function whoami(h: string, env: Record<string, string> = {}) {
  const who = await cli(["whoami", "--json"], { home: h, env });
  expect(who.code, who.stderr).toBe(0);
  return JSON.parse(who.stdout) as { listen_device_id: string | null };
}

async function signedOut(server: TestServer, id: string): Promise<boolean> {
  const [row] = await sql<{ out: boolean }>(
    server.databaseUrl,
    "select signed_out_at is not null as out from device where id = $1",
    [id],
  );
  return row?.out as boolean;
}

/** A notification from `account`, sent with its CLI token by `herald notify`. */
const notifyAs = (server: TestServer, account: TestAccount, title: string, topic: string) =>
  cli(["notify", title, "--topic", topic], {
    home: "/nonexistent",
    env: { HERALD_URL: server.url, HERALD_TOKEN: account.token },
  });

describe("listen at another server than the saved login's", () => {
  it("registers a device there, and keeps the saved login's device signed in and in use", async () => {
    const h = await loggedIn();
    const atFirst = await listenOnce(h, first, "servers-a", () =>
      notify(first, { title: "from the first", topic: "servers-a" }),
    );
    expect(atFirst.title).toBe("from the first");
    const [mine] = saved(h).devices ?? [];
    expect(mine).toMatchObject({ url: first.url });

    const bee = await newAccount(second, "bee@example.com");
    const env = { HERALD_URL: second.url, HERALD_TOKEN: bee.token };
    const atSecond = await listenOnce(
      h,
      second,
      "servers-b",
      () => notifyAs(second, bee, "from the second", "servers-b"),
      env,
    );
    expect(atSecond.title).toBe("from the second");
    expect(await signedOut(first, mine?.id as string)).toBe(false);
    const devices = saved(h).devices ?? [];
    expect(devices.map((d) => d.url).sort()).toEqual([first.url, second.url].sort());
    const theirs = devices.find((d) => d.url === second.url)?.id;
    expect(atSecond.stderr).toContain(
      `registered this machine as device ${theirs} on ${second.url}`,
    );

    // Back at the first server: the same device, not a new one.
    const again = await listenOnce(h, first, "servers-a", () =>
      notify(first, { title: "first again", topic: "servers-a" }),
    );
    expect(again.title).toBe("first again");
    expect(again.stderr).not.toContain("registered");
    // `devices list` marks this machine's device with `*`, as `tokens list` marks its token.
    const listed = await cli(["devices", "list"], { home: h });
    expect(listed.stdout).toMatch(new RegExp(`^${mine?.id} \\* `, "m"));
    expect(listed.stdout.match(/ \* /g)).toHaveLength(1);

    // Logging out ends the login's device; the other server's, made with HERALD_TOKEN, stays.
    const out = await cli(["logout"], { home: h });
    expect(out.code, out.stderr).toBe(0);
    expect(await signedOut(first, mine?.id as string)).toBe(true);
    const kept = saved(h).devices ?? [];
    expect(kept.map((d) => d.url)).toEqual([second.url]);
    expect(await signedOut(second, kept[0]?.id as string)).toBe(false);
  });
});

describe("listen with another account's token on the same server", () => {
  it("receives that account's notifications, not the saved login's", async () => {
    const h = await loggedIn();
    // `whoami` says which device the next listen uses: none yet, then the one it registered.
    const before = await cli(["whoami"], { home: h });
    expect(before.stdout).toMatch(/^listens +as a new device: herald listen registers/m);
    await listenOnce(h, first, "accounts-a", () =>
      notify(first, { title: "the owner's", topic: "accounts-a" }),
    );
    const owners = saved(h).devices?.[0]?.id;
    expect(owners).toBeTruthy();
    expect((await whoami(h)).listen_device_id).toBe(owners);

    const other = await newAccount(first, "other-listener@example.com");
    const heard = await listenOnce(
      h,
      first,
      "accounts-b",
      async () => {
        await notify(first, { title: "the owner's", topic: "accounts-b" });
        await notifyAs(first, other, "the other's", "accounts-b");
      },
      { HERALD_TOKEN: other.token },
    );
    expect(heard.title).toBe("the other's");
    expect(heard.stderr).toContain("registered this machine as device");
    expect(saved(h).devices).toHaveLength(2);
    const others = saved(h).devices?.find((d) => d.id !== owners)?.id;
    expect((await whoami(h, { HERALD_TOKEN: other.token })).listen_device_id).toBe(others);
    expect((await whoami(h)).listen_device_id).toBe(owners);

    // The saved login listens on its own device still.
    const mine = await listenOnce(h, first, "accounts-a", () =>
      notify(first, { title: "the owner's again", topic: "accounts-a" }),
    );
    expect(mine.title).toBe("the owner's again");
    expect(mine.stderr).not.toContain("registered");
    expect(saved(h).devices?.map((d) => d.id)).toContain(owners);
  });
});
