/**
 * A password change or reset ends the account's other console sessions and CLI tokens (issue
 * 21, point 4), unless the CLI tokens are kept; the caller's own credential, the devices and
 * the API keys go on. Tried through the CLI (`herald account password`) and the setup link.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SetupLinkRepository } from "../../src/db/repositories/setup-links.ts";
import { cliFor, home } from "../helpers/cli.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { signInStreamDevice } from "../helpers/streams.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ credentialCacheMs: 0 });
});
afterAll(async () => server.close());
const { cli } = cliFor(() => server);

let password = ownerPassword;

async function post(path: string, payload: unknown, credential?: string) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: credential ? { authorization: `Bearer ${credential}` } : {},
    body: JSON.stringify(payload),
  });
  return {
    status: res.status,
    json: (await body(res)) as JsonBody,
    cookie: res.headers.get("set-cookie"),
  };
}

const cliToken = async () =>
  (await post("/v1/auth/login", { email: "owner@example.com", password, token_name: "box" })).json
    .token as string;
const session = async () =>
  (await post("/v1/auth/session", { email: "owner@example.com", password })).cookie?.split(
    ";",
  )[0] as string;

/** Whether a credential (or a session cookie) still works. */
/** A new HOME with the owner logged in, with the password of the moment. */
async function loggedIn(): Promise<string> {
  const h = home();
  const r = await cli(["login", "--email", "owner@example.com", "--password-stdin"], {
    home: h,
    stdin: `${password}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  return h;
}

async function works(credential: { bearer?: string; cookie?: string }): Promise<boolean> {
  const res = await fetch(`${server.url}/v1/projects`, {
    headers: credential.bearer
      ? { authorization: `Bearer ${credential.bearer}` }
      : { cookie: credential.cookie ?? "" },
  });
  return res.status === 200;
}

describe("a password change", () => {
  it("from the CLI: revokes the other CLI tokens and sessions, keeps this machine's, devices and keys", async () => {
    const h = await loggedIn();
    const other = await cliToken();
    const cookie = await session();
    const device = await signInStreamDevice(server.url, "phone", []);
    const next = "a new passphrase 1";
    const r = await cli(["account", "password", "--password-stdin"], {
      home: h,
      stdin: `${password}\n${next}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    password = next;
    expect(r.stdout).toMatch(
      /password changed: 1 other console session\(s\) signed out, 1 other CLI token\(s\) revoked/,
    );
    expect(await works({ bearer: other })).toBe(false);
    expect(await works({ cookie })).toBe(false);
    expect((await cli(["projects", "list"], { home: h })).code).toBe(0);
    const published = await post("/v1/notify", { title: "still publishing" }, server.apiKey);
    expect(published.status).toBe(202);
    const inbox = await fetch(`${server.url}/v1/devices`, {
      headers: { authorization: `Bearer ${device.credential}` },
    });
    expect(inbox.status).not.toBe(401);
    // A revoked token is told why it may have stopped.
    const refused = await post("/v1/projects", { name: "x" }, other);
    expect(refused.json.detail).toMatch(
      /a password change or reset revokes the account's CLI tokens/,
    );
  });

  it("keeps the CLI tokens when asked, still ending the sessions", async () => {
    const h = await loggedIn();
    const other = await cliToken();
    const cookie = await session();
    const next = "another passphrase 2";
    const r = await cli(["account", "password", "--keep-cli-tokens", "--password-stdin"], {
      home: h,
      stdin: `${password}\n${next}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    password = next;
    expect(r.stdout).toMatch(/the CLI tokens kept, as asked/);
    expect(await works({ bearer: other })).toBe(true);
    expect(await works({ cookie })).toBe(false);
  });
});

describe("a password reset (the operator's setup link)", () => {
  it("revokes every CLI token and session but the one it starts", async () => {
    const token = await cliToken();
    const cookie = await session();
    const link = await new SetupLinkRepository(server.orm).create(server.accountId);
    const reset = await post("/v1/account/setup", { token: link, password: "reset passphrase 3" });
    expect(reset.status, JSON.stringify(reset.json)).toBe(200);
    password = "reset passphrase 3";
    // (REST answers the account alone: response_body; the counts travel over Connect.)
    expect(await works({ bearer: token })).toBe(false);
    expect(await works({ cookie })).toBe(false);
    expect(await works({ cookie: reset.cookie?.split(";")[0] })).toBe(true);
  });
});
