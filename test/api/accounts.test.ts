/**
 * Sign-up, login (password and RFC 8628 device flow), projects, API keys and CLI tokens, on a
 * real server, through the generated Connect client and REST.
 */
import { toJsonString } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountService } from "../../gen/herald/v1/account_service_pb.ts";
import {
  ApiKeyService,
  ListApiKeysResponseSchema,
} from "../../gen/herald/v1/api_key_service_pb.ts";
import { AuthService, ListCliTokensResponseSchema } from "../../gen/herald/v1/auth_service_pb.ts";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { ProjectService } from "../../gen/herald/v1/project_service_pb.ts";
import { sql } from "../helpers/db.ts";
import { body, failure, refusedAt } from "../helpers/http.ts";
import { notify, ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ credentialCacheMs: 500, loginFailuresPerAccount: 3 });
});
afterAll(async () => server.close());

const clients = () => {
  const t = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
  return {
    account: createClient(AccountService, t),
    auth: createClient(AuthService, t),
    projects: createClient(ProjectService, t),
    keys: createClient(ApiKeyService, t),
    notify: createClient(NotifyService, t),
  };
};
const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

async function signUpAndLogin(email: string, password = "a long enough password") {
  const c = clients();
  const { account } = await c.account.signUp({ email, password });
  const { token } = await c.auth.login({ email, password, tokenName: "laptop" });
  return { account, token };
}

describe("sign-up and password login", () => {
  it("creates an account with a default project and logs in with a CLI token", async () => {
    const res = await fetch(`${server.url}/v1/accounts`, {
      method: "POST",
      body: JSON.stringify({ email: "ada@example.com", password: "analytical engine" }),
    });
    expect(res.status).toBe(201);
    const account = await body(res);
    expect(account).toMatchObject({ email: "ada@example.com", plan: "free" });
    expect(account.password).toBeUndefined();
    const c = clients();
    const { token, cliToken } = await c.auth.login({
      email: "ADA@example.com",
      password: "analytical engine",
      tokenName: "laptop",
    });
    expect(token).toMatch(/^hc_[0-9A-Za-z]{38}$/);
    expect(cliToken?.current).toBe(true);
    const me = await c.account.getAccount({}, bearer(token));
    expect(me.account?.id).toBe(account.id);
    expect(me.account?.defaultProjectId).toBe(account.default_project_id);
  });

  it("refuses a taken email, a short password and a bad email", async () => {
    const c = clients();
    await c.account.signUp({ email: "taken@example.com", password: "a long enough password" });
    const dup = await failure(
      c.account.signUp({ email: "Taken@example.com", password: "a long enough password" }),
    );
    expect(dup.code).toBe(Code.AlreadyExists);
    const bad = await failure(c.account.signUp({ email: "not-an-email", password: "short" }));
    expect(bad.code).toBe(Code.InvalidArgument);
  });

  it("refuses a wrong password, then limits failed attempts per account", async () => {
    const c = clients();
    await c.account.signUp({ email: "guess@example.com", password: "the right password" });
    for (let i = 0; i < 3; i++) {
      const err = await failure(
        c.auth.login({ email: "guess@example.com", password: "wrong guess" }),
      );
      expect(err.code).toBe(Code.Unauthenticated);
    }
    const limited = await failure(
      c.auth.login({ email: "guess@example.com", password: "the right password" }),
    );
    expect(limited.code).toBe(Code.ResourceExhausted);
    expect(Number(limited.metadata.get("retry-after"))).toBeGreaterThan(0);
  });

  it("lets the bootstrap owner log in with HERALD_OWNER_PASSWORD", async () => {
    const { token } = await clients().auth.login({
      email: "owner@example.com",
      password: ownerPassword,
    });
    expect(token).toMatch(/^hc_/);
  });
});

describe("device login (RFC 8628)", () => {
  it("start, pending, slow_down, approve from a signed-in client, token, token works, once", async () => {
    const c = clients();
    const owner = await signUpAndLogin("device-owner@example.com");
    const start = await c.auth.startLogin({ tokenName: "build-box" });
    expect(start.userCode).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    expect(start.interval).toBe(5);
    expect(start.expiresIn).toBe(600);
    expect(start.verificationUriComplete).toContain(start.userCode);

    expect((await c.auth.pollLogin({ deviceCode: start.deviceCode })).status).toBe(
      "authorization_pending",
    );
    const tooFast = await c.auth.pollLogin({ deviceCode: start.deviceCode });
    expect(tooFast.status).toBe("slow_down");
    expect(tooFast.interval).toBe(10);

    const approved = await c.auth.approveLogin(
      { userCode: start.userCode.toLowerCase().replace("-", "") },
      bearer(owner.token),
    );
    expect(approved.tokenName).toBe("build-box");
    const got = await c.auth.pollLogin({ deviceCode: start.deviceCode });
    expect(got.status).toBe("approved");
    expect(got.token).toMatch(/^hc_/);
    const me = await c.account.getAccount({}, bearer(got.token));
    expect(me.account?.id).toBe(owner.account?.id);
    // The token is handed out once.
    const again = await c.auth.pollLogin({ deviceCode: start.deviceCode });
    expect(again).toMatchObject({ status: "expired_token", token: "" });
  });

  it("reports access_denied when denied, and expired_token after expiry", async () => {
    const c = clients();
    const owner = await signUpAndLogin("device-denier@example.com");
    const denied = await c.auth.startLogin({});
    await c.auth.denyLogin({ userCode: denied.userCode }, bearer(owner.token));
    expect((await c.auth.pollLogin({ deviceCode: denied.deviceCode })).status).toBe(
      "access_denied",
    );

    const late = await c.auth.startLogin({});
    await sql(
      server.databaseUrl,
      "update device_login set expires_at = now() - interval '1 second' where user_code = $1",
      [late.userCode.replace("-", "")],
    );
    expect((await c.auth.pollLogin({ deviceCode: late.deviceCode })).status).toBe("expired_token");
    const err = await failure(
      c.auth.approveLogin({ userCode: late.userCode }, bearer(owner.token)),
    );
    expect(err.code).toBe(Code.NotFound);
  });

  it("refuses approval without a CLI token", async () => {
    const c = clients();
    const start = await c.auth.startLogin({});
    const err = await failure(c.auth.approveLogin({ userCode: start.userCode }));
    expect(err.code).toBe(Code.Unauthenticated);
    const withKey = await failure(
      c.auth.approveLogin({ userCode: start.userCode }, bearer(server.apiKey)),
    );
    expect(withKey.code).toBe(Code.PermissionDenied);
  });
});

describe("projects and API keys", () => {
  it("manages projects; the default cannot be deleted; another account's is not found", async () => {
    const c = clients();
    const { token } = await signUpAndLogin("projects@example.com");
    const stranger = await signUpAndLogin("stranger@example.com");
    const created = await fetch(`${server.url}/v1/projects`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "ci" }),
    });
    expect(created.status).toBe(201);
    const ci = await body(created);
    expect(created.headers.get("location")).toBe(`/v1/projects/${ci.id}`);
    const dup = await failure(c.projects.createProject({ name: "ci" }, bearer(token)));
    expect(dup.code).toBe(Code.AlreadyExists);
    const list = await c.projects.listProjects({}, bearer(token));
    expect(list.projects.map((p) => p.name)).toEqual(["default", "ci"]);
    const renamed = await c.projects.renameProject({ id: ci.id, name: "ci-main" }, bearer(token));
    expect(renamed.project?.name).toBe("ci-main");
    const def = list.projects[0];
    const refuse = await failure(c.projects.deleteProject({ id: def?.id ?? "" }, bearer(token)));
    expect(refuse.code).toBe(Code.FailedPrecondition);
    const theirs = await failure(c.projects.getProject({ id: ci.id }, bearer(stranger.token)));
    expect(theirs.code).toBe(Code.NotFound);
    await c.projects.deleteProject({ id: ci.id }, bearer(token));
    expect((await failure(c.projects.getProject({ id: ci.id }, bearer(token)))).code).toBe(
      Code.NotFound,
    );
  });

  it("creates a key shown once, lists it without its secret, revokes it everywhere in 1 s", async () => {
    const c = clients();
    const { token, account } = await signUpAndLogin("keys@example.com");
    const projectId = account?.defaultProjectId ?? "";
    const res = await fetch(`${server.url}/v1/projects/${projectId}/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "ci" }),
    });
    expect(res.status).toBe(201);
    const created = await body(res);
    expect(created.secret).toMatch(/^hk_/);
    expect(created.api_key.scopes).toEqual(["write"]);
    const listed = await c.keys.listApiKeys({ projectId }, bearer(token));
    expect(toJsonString(ListApiKeysResponseSchema, listed)).not.toContain(created.secret);
    expect(listed.apiKeys[0]?.displayPrefix).toBe(`${created.secret.slice(0, 7)}…`);

    const published = await notify(
      server,
      { title: "with new key" },
      {
        authorization: `Bearer ${created.secret}`,
      },
    );
    expect(published.status).toBe(202);
    expect(published.json.project_id).toBe(projectId);
    // last_used_at is written off the request path.
    const lastUsed = async () =>
      (await c.keys.listApiKeys({ projectId }, bearer(token))).apiKeys[0]?.lastUsedAt;
    await waitFor(async () => (await lastUsed()) !== undefined);
    expect(await lastUsed()).toBeDefined();

    await c.keys.revokeApiKey({ id: created.api_key.id }, bearer(token));
    // Every cache forgets it within a second.
    await waitFor(() => refusedAt(server.url, created.secret), 1_000);
    const after = await notify(
      server,
      { title: "revoked" },
      { authorization: `Bearer ${created.secret}` },
    );
    expect(after.status).toBe(401);
    const stranger = await signUpAndLogin("key-thief@example.com");
    expect((await failure(c.keys.listApiKeys({ projectId }, bearer(stranger.token)))).code).toBe(
      Code.NotFound,
    );
    expect(
      (await failure(c.keys.createApiKey({ projectId, name: "x" }, bearer(stranger.token)))).code,
    ).toBe(Code.NotFound);
  });
});

describe("publishing with a CLI token", () => {
  it("goes to the default project, or the one named by Herald-Project (id or name)", async () => {
    const c = clients();
    const { token, account } = await signUpAndLogin("cli-publisher@example.com");
    const { project } = await c.projects.createProject({ name: "deploys" }, bearer(token));
    const auth = { authorization: `Bearer ${token}` };
    const plain = await notify(server, { title: "default" }, auth);
    expect(plain.status).toBe(202);
    expect(plain.json.project_id).toBe(account?.defaultProjectId);
    const byName = await notify(
      server,
      { title: "named" },
      { ...auth, "herald-project": "deploys" },
    );
    expect(byName.json.project_id).toBe(project?.id);
    const byId = await notify(
      server,
      { title: "by id" },
      { ...auth, "herald-project": project?.id ?? "" },
    );
    expect(byId.json.project_id).toBe(project?.id);
    const missing = await notify(server, { title: "x" }, { ...auth, "herald-project": "nope" });
    expect(missing.status).toBe(404);
    // Another account's project name resolves to nothing, even when it exists there.
    const other = await signUpAndLogin("cli-other@example.com");
    await c.projects.createProject({ name: "secret-project" }, bearer(other.token));
    const foreign = await notify(
      server,
      { title: "x" },
      { ...auth, "herald-project": "secret-project" },
    );
    expect(foreign.status).toBe(404);
  });
});

describe("logout and CLI token revocation", () => {
  it("logout revokes the calling token at once; RevokeCliToken revokes another", async () => {
    const c = clients();
    const { token } = await signUpAndLogin("logout@example.com");
    const second = await c.auth.login({
      email: "logout@example.com",
      password: "a long enough password",
      tokenName: "desktop",
    });
    const tokens = await c.auth.listCliTokens({}, bearer(token));
    expect(tokens.cliTokens.map((t) => t.name).sort()).toEqual(["desktop", "laptop"]);
    expect(tokens.cliTokens.find((t) => t.current)?.name).toBe("laptop");
    expect(toJsonString(ListCliTokensResponseSchema, tokens)).not.toContain(second.token);
    await c.auth.revokeCliToken({ id: second.cliToken?.id ?? "" }, bearer(token));
    await c.auth.logout({}, bearer(token));
    expect((await failure(c.account.getAccount({}, bearer(token)))).code).toBe(
      Code.Unauthenticated,
    );
    await waitFor(() => refusedAt(server.url, second.token), 1_000);
    expect((await failure(c.account.getAccount({}, bearer(second.token)))).code).toBe(
      Code.Unauthenticated,
    );
  });
});
