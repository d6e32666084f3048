/**
 * The console's way in: the owner's one-time setup link, sessions in an HttpOnly cookie that
 * only the server's own pages can use, sign-out, password change, and the public facts a
 * signed-out page needs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SetupLinkRepository } from "../../src/db/repositories/setup-links.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ signupEnabled: false });
});
afterAll(async () => server.close());

/** A Connect-protocol call as the console's fetch makes it. */
async function rpc(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; cookie: string | null }> {
  const res = await fetch(`${server.url}/herald.v1.${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: server.url, ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    json: (await res.json()) as Record<string, unknown>,
    cookie: res.headers.get("set-cookie"),
  };
}

const sessionOf = (setCookie: string | null) => /herald_session=([^;]*)/.exec(setCookie ?? "")?.[1];

describe("the owner's setup link", () => {
  it("sets the password once, signs the console in, and cannot be used again", async () => {
    const token = await new SetupLinkRepository(server.orm).create(server.accountId);
    const done = await rpc("AccountService/CompleteOwnerSetup", {
      token,
      password: "a brand new passphrase",
    });
    expect(done.status).toBe(200);
    expect(done.json.account).toMatchObject({ email: "owner@example.com" });
    expect(JSON.stringify(done.json)).not.toMatch(/hc_/);
    expect(done.cookie).toMatch(
      /^herald_session=hc_\w+; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    const me = await rpc(
      "AccountService/GetAccount",
      {},
      { cookie: `herald_session=${sessionOf(done.cookie)}` },
    );
    expect(me.status).toBe(200);
    const again = await rpc("AccountService/CompleteOwnerSetup", {
      token,
      password: "another passphrase!",
    });
    expect(again.status).toBe(401);
    expect(again.json.message).toMatch(/npm run owner:reset-password/);
    // The new password is the account's: a login with it works, the old one does not.
    const login = await rpc("AuthService/StartSession", {
      email: "owner@example.com",
      password: "a brand new passphrase",
    });
    expect(login.status).toBe(200);
    const old = await rpc("AuthService/StartSession", {
      email: "owner@example.com",
      password: ownerPassword,
    });
    expect(old.status).toBe(401);
    // Put the test password back for the other tests.
    const reset = await new SetupLinkRepository(server.orm).create(server.accountId);
    expect(
      (await rpc("AccountService/CompleteOwnerSetup", { token: reset, password: ownerPassword }))
        .status,
    ).toBe(200);
  });
  it("stops working when a newer link is made, and after 24 hours", async () => {
    const links = new SetupLinkRepository(server.orm);
    const first = await links.create(server.accountId);
    await links.create(server.accountId);
    expect(await links.consume(first)).toBeUndefined();
    const late = await links.create(server.accountId);
    await server.orm.em
      .getConnection()
      .execute(
        "update setup_link set expires_at = now() - interval '1 second' where used_at is null",
      );
    expect(await links.consume(late)).toBeUndefined();
  });
});

describe("console sessions", () => {
  async function signIn() {
    const res = await rpc(
      "AuthService/StartSession",
      { email: "owner@example.com", password: ownerPassword },
      { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0 Safari/537.36" },
    );
    expect(res.status).toBe(200);
    return { cookie: `herald_session=${sessionOf(res.cookie)}`, json: res.json };
  }

  it("are listed and revoked like CLI tokens, named after the browser", async () => {
    const { cookie, json } = await signIn();
    expect(json.session).toMatchObject({
      kind: "session",
      name: "Console: Chrome on Linux",
      current: true,
    });
    const list = await rpc("AuthService/ListCliTokens", {}, { cookie });
    const sessions = (list.json.cliTokens as { kind: string; current?: boolean }[]).filter(
      (t) => t.kind === "session",
    );
    expect(sessions.some((t) => t.current)).toBe(true);
  });
  it("work only from the server's own pages", async () => {
    const { cookie } = await signIn();
    const elsewhere = await rpc(
      "ProjectService/ListProjects",
      {},
      { cookie, origin: "https://evil.example" },
    );
    expect(elsewhere.status).toBe(403);
    const crossSite = await rpc(
      "ProjectService/ListProjects",
      {},
      { cookie, origin: "", "sec-fetch-site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    expect((await rpc("ProjectService/ListProjects", {}, { cookie })).status).toBe(200);
    const login = await rpc(
      "AuthService/StartSession",
      { email: "owner@example.com", password: ownerPassword },
      { origin: "https://evil.example" },
    );
    expect(login.status).toBe(403);
    expect(login.cookie).toBeNull();
  });
  it("end on sign-out: the cookie is cleared and no longer works", async () => {
    const { cookie } = await signIn();
    const out = await rpc("AuthService/EndSession", {}, { cookie });
    expect(out.status).toBe(200);
    expect(out.cookie).toMatch(/^herald_session=; Max-Age=0;/);
    const after = await rpc("ProjectService/ListProjects", {}, { cookie });
    expect(after.status).toBe(401);
  });
  it("end, all but the current one, when the password changes", async () => {
    const a = await signIn();
    const b = await signIn();
    const changed = await rpc(
      "AccountService/ChangePassword",
      { currentPassword: ownerPassword, newPassword: "changed passphrase 2" },
      { cookie: a.cookie },
    );
    expect(changed.status).toBe(200);
    expect(changed.json.sessionsEnded).toBeGreaterThanOrEqual(1);
    // The revocation reaches every cache within a second.
    await waitFor(
      async () =>
        (await rpc("ProjectService/ListProjects", {}, { cookie: b.cookie })).status === 401,
      1_000,
    );
    expect((await rpc("ProjectService/ListProjects", {}, { cookie: b.cookie })).status).toBe(401);
    expect((await rpc("ProjectService/ListProjects", {}, { cookie: a.cookie })).status).toBe(200);
    const wrong = await rpc(
      "AccountService/ChangePassword",
      { currentPassword: "not it at all", newPassword: ownerPassword },
      { cookie: a.cookie },
    );
    expect(wrong.status).toBe(403);
    expect(
      (
        await rpc(
          "AccountService/ChangePassword",
          { currentPassword: "changed passphrase 2", newPassword: ownerPassword },
          { cookie: a.cookie },
        )
      ).status,
    ).toBe(200);
  });
});

describe("public facts", () => {
  it("sign-up is closed unless the operator opens it", async () => {
    expect((await rpc("AccountService/GetServerInfo", {})).json).toEqual({});
    const signUp = await rpc("AccountService/SignUp", {
      email: "new@example.com",
      password: "long enough password",
    });
    expect(signUp.status).toBe(403);
  });
  it("Web Push's key is refused when Web Push is not configured", async () => {
    const res = await rpc("DeviceService/GetWebPushKey", {});
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/not configured/);
  });
});

describe("the console's files", () => {
  it("are served with a policy that allows no inline script, and make an installable app", async () => {
    const page = await fetch(`${server.url}/notifications`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(await page.text()).toContain('<link rel="manifest" href="/manifest.webmanifest"');
    const manifest = (await (await fetch(`${server.url}/manifest.webmanifest`)).json()) as {
      display: string;
      start_url: string;
      icons: { src: string; sizes: string; type: string }[];
    };
    expect(manifest.display).toBe("standalone");
    for (const size of ["192x192", "512x512"]) {
      const icon = manifest.icons.find((i) => i.sizes === size && i.type === "image/png");
      expect(icon, size).toBeDefined();
      const png = Buffer.from(await (await fetch(`${server.url}${icon?.src}`)).arrayBuffer());
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      expect(png.readUInt32BE(16)).toBe(Number(size.split("x")[0]));
    }
    const sw = await fetch(`${server.url}/sw.js`);
    expect(sw.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(await sw.text()).toContain("showNotification");
  });
});
