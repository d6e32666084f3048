/**
 * `herald hooks` (issue 25): create prints the URL, the secret once (warned on standard error)
 * and the sender's ready-to-paste snippet; the generic hook's snippet, run as printed in a shell,
 * publishes; list, rotate (the old secret still works) and delete by id prefix; an API key acts
 * on its own project.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor } from "../helpers/cli.ts";
import { sql } from "../helpers/db.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});
const { cli, loggedIn } = cliFor(() => server);
const shell = promisify(execFile);

const titles = async () =>
  (
    await sql<{ title: string }>(
      server.databaseUrl,
      "select title from notification where project_id = $1 order by id",
      [server.projectId],
    )
  ).map((r) => r.title);

describe("herald hooks", () => {
  it("creates with a snippet that works as printed, lists, rotates and deletes", async () => {
    const home = await loggedIn();
    const made = await cli(["hooks", "create", "generic", "nightly backup", "--topic", "backups"], {
      home,
    });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain("shown once");
    const secret = /secret: +(hks_[a-z2-7]{26})/.exec(made.stdout)?.[1] as string;
    const url = /url: +(\S+)/.exec(made.stdout)?.[1] as string;
    expect(url).toMatch(new RegExp(`^${server.url}/v1/hooks/[0-9a-f-]{36}$`));
    const snippet = made.stdout.slice(made.stdout.indexOf("curl ")).trimEnd();
    expect(snippet).toContain(`Bearer ${secret}`);
    await shell("bash", ["-c", `${snippet} --fail --silent --show-error`]);
    expect(await titles()).toContain("Backup finished");

    const id = url.slice(url.lastIndexOf("/") + 1);
    const listed = await cli(["hooks", "list"], { home });
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain("nightly backup");
    expect(listed.stdout).not.toContain(secret);

    const rotated = await cli(["hooks", "rotate", id.slice(0, 8)], { home });
    expect(rotated.code, rotated.stderr).toBe(0);
    const newSecret = /secret: +(hks_[a-z2-7]{26})/.exec(rotated.stdout)?.[1];
    expect(newSecret).toBeDefined();
    expect(newSecret).not.toBe(secret);
    // The old secret works for 24 hours more.
    await shell("bash", ["-c", `${snippet.replace("Backup finished", "Still works")} --fail -s`]);
    expect(await titles()).toContain("Still works");

    const deleted = await cli(["hooks", "delete", id.slice(0, 8), "--yes"], { home });
    expect(deleted.code, deleted.stderr).toBe(0);
    const refused = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${newSecret}` },
      body: "{}",
    });
    expect(refused.status).toBe(401);
  });

  it("prints each sender's snippet; --json has the hook and the secret; an API key acts on its project", async () => {
    const home = await loggedIn();
    const am = await cli(["hooks", "create", "alertmanager", "prod", "--topic", "oncall"], {
      home,
    });
    expect(am.stdout).toMatch(
      /webhook_configs:\n {6}- url: http:\/\/127\.0\.0\.1:\d+\/v1\/hooks\/[0-9a-f-]{36}/,
    );
    expect(am.stdout).toMatch(/credentials: hks_/);
    const gh = await cli(["hooks", "create", "github", "repo", "--json"], {
      home: home,
      env: { HERALD_API_KEY: server.apiKey },
    });
    expect(gh.code, gh.stderr).toBe(0);
    const json = JSON.parse(gh.stdout);
    expect(json).toMatchObject({ kind: "github", name: "repo", project_id: server.projectId });
    expect(json.secret).toMatch(/^hks_/);
    const bad = await cli(["hooks", "create", "jenkins", "x"], { home });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/kind/);
  });
});
