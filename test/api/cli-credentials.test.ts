/**
 * One credential story: `whoami` shows the very credential, account and project the next
 * command uses, and where each came from; errors name where a refused credential came from;
 * `--json` errors carry the stable code; Ctrl-C ends `login --device` at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor, home } from "../helpers/cli.ts";
import { addProjectWithKey, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());
const { cli, loggedIn } = cliFor(() => server);

describe("whoami", () => {
  it("with an API key in the environment and a saved login, shows that the key publishes", async () => {
    const h = await loggedIn();
    const other = await addProjectWithKey(server, { newAccount: true, scopes: ["write", "read"] });
    const env = { HERALD_API_KEY: other.apiKey };
    const who = await cli(["whoami", "--json"], { home: h, env });
    expect(JSON.parse(who.stdout)).toMatchObject({
      credential: {
        kind: "API key",
        prefix: `${other.apiKey.slice(0, 7)}…`,
        source: "HERALD_API_KEY",
      },
      owner_credential: { source: expect.stringMatching(/^saved login/) },
      email: "owner@example.com",
      project: null,
    });
    const human = await cli(["whoami"], { home: h, env });
    expect(human.stdout).toContain("publishes  with API key");
    expect(human.stdout).toContain(
      "HERALD_API_KEY is used to publish, not the saved login's token",
    );
    // And it is so: the notification lands in the key's project, of the other account.
    const sent = await cli(["notify", "which account?", "--json"], { home: h, env });
    expect(JSON.parse(sent.stdout).project_id).toBe(other.projectId);
  });

  it("with only an API key, reports the key instead of 'not logged in'", async () => {
    const who = await cli(["whoami"], { home: home(), env: { HERALD_API_KEY: server.apiKey } });
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toMatch(/publishes {2}with API key hk_\w{4}… \(from HERALD_API_KEY\)/);
    expect(who.stdout).toContain("account    not shown to an API key");
  });

  it("with only an API key, listen says that receiving takes a login, and why the key is not one", async () => {
    const r = await cli(["listen"], { home: home(), env: { HERALD_API_KEY: server.apiKey } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("not logged in: run `herald login`");
    expect(r.stderr).toContain("the API key from HERALD_API_KEY publishes and reads its project");
    const none = await cli(["listen"], { home: home(), env: {} });
    expect(none.code).toBe(3);
    expect(none.stderr).not.toContain("API key");
  });
});

describe("errors", () => {
  it("name where a refused credential came from, and --json carries the stable code", async () => {
    const bad = `${server.apiKey.slice(0, -1)}${server.apiKey.endsWith("A") ? "B" : "A"}`;
    const r = await cli(["notify", "x", "--api-key", bad, "--json"], { home: home() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("checksum does not match");
    expect(r.stderr).toContain("(the credential came from --api-key)");
    expect(r.stderr).not.toContain("HERALD_API_KEY");
    const json = JSON.parse(r.stdout);
    expect(json.error).toMatchObject({
      code: "unauthenticated",
      request_id: expect.stringMatching(/^req_/),
    });
  });
});

describe("login --device", () => {
  it("ends at the first Ctrl-C", async () => {
    const abort = new AbortController();
    let said = "";
    const pending = cli(["login", "--device"], {
      home: home(),
      signal: abort.signal,
      onStdout: (s) => {
        said += s;
      },
      onStderr: (s) => {
        said += s;
      },
    });
    // Waiting for the person: it has shown where to approve the login.
    await waitFor(() => said.includes("/device"));
    const pressed = Date.now();
    abort.abort();
    const r = await pending;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain("login canceled");
    expect(Date.now() - pressed).toBeLessThan(2_000);
  });
});
