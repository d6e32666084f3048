/**
 * The herald CLI, run in-process with a temporary config directory against a real server.
 */
import { chmodSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { cliFor, configFile, devicesListening, home } from "../helpers/cli.ts";
import { sql } from "../helpers/db.ts";
import { refusedAt } from "../helpers/http.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { tempDir } from "../helpers/temp.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver } from "../helpers/webhook-receiver.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    streamKeepaliveMs: 500,
    webhookAllowPrivate: true,
    webhookBackoffScale: 0.01,
  });
});
afterAll(async () => server.close());

const { cli, loggedIn, get } = cliFor(() => server);

describe("login, whoami, logout", () => {
  it("logs in with a password; the config file is 0600 and re-chmodded on every save", async () => {
    const h = await loggedIn();
    expect(statSync(configFile(h)).mode & 0o777).toBe(0o600);
    const who = await cli(["whoami", "--json"], { home: h });
    expect(JSON.parse(who.stdout)).toMatchObject({ email: "owner@example.com", url: server.url });
    chmodSync(configFile(h), 0o644);
    expect((await cli(["projects", "use", "default"], { home: h })).code).toBe(0);
    expect(statSync(configFile(h)).mode & 0o777).toBe(0o600);
    const out = await cli(["logout"], { home: h });
    expect(out.code).toBe(0);
    expect(JSON.parse(readFileSync(configFile(h), "utf8")).token).toBeUndefined();
    const after = await cli(["whoami"], { home: h });
    expect(after.code).toBe(3);
    expect(after.stderr).toContain("not logged in: run `herald login`");
  });

  it("prompts for email and password on a terminal, hiding the password", async () => {
    const h = home();
    const asked: { question: string; hidden: boolean }[] = [];
    const code = await runCli(["login"], {
      stdout: () => {},
      stderr: () => {},
      readStdin: async () => undefined,
      isTty: true,
      prompt: async (question, hidden) => {
        asked.push({ question, hidden });
        return question.startsWith("Email") ? "owner@example.com" : ownerPassword;
      },
      env: { HOME: h, XDG_CONFIG_HOME: join(h, ".config"), HERALD_URL: server.url },
    });
    expect(code).toBe(0);
    expect(asked).toEqual([
      { question: "Email: ", hidden: false },
      { question: "Password: ", hidden: true },
    ]);
  });

  it("refuses a wrong password with exit code 3", async () => {
    const r = await cli(["login", "--email", "owner@example.com", "--password-stdin"], {
      home: home(),
      stdin: "nope\n",
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/wrong email or password/);
  });

  it("logs in with the device flow, approved from another signed-in machine", async () => {
    const approver = await loggedIn();
    const h = home();
    let stderr = "";
    const pending = runCli(["login", "--device"], {
      stdout: () => {},
      stderr: (s) => {
        stderr += s;
      },
      readStdin: async () => undefined,
      isTty: false,
      env: { HOME: h, XDG_CONFIG_HOME: join(h, ".config"), HERALD_URL: server.url },
    });
    for (let i = 0; i < 100 && !/herald login --approve (\S+)/.test(stderr); i++)
      await new Promise((r) => setTimeout(r, 20));
    const code = /herald login --approve (\S+)/.exec(stderr)?.[1] as string;
    expect(code).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    const approved = await cli(["login", "--approve", code], { home: approver });
    expect(approved.code, approved.stderr).toBe(0);
    expect(await pending).toBe(0);
    const who = await cli(["whoami", "--json"], { home: h });
    expect(JSON.parse(who.stdout).email).toBe("owner@example.com");
  }, 20_000);
});

describe("keys", () => {
  it("creates (secret once, with a warning), lists without the secret, revokes", async () => {
    const h = await loggedIn();
    const created = await cli(["keys", "create", "ci", "--json"], { home: h });
    expect(created.code).toBe(0);
    const { secret, id } = JSON.parse(created.stdout);
    expect(secret).toMatch(/^hk_/);
    const human = await cli(["keys", "create", "other"], { home: h });
    expect(human.stderr).toMatch(/shown once/);
    const list = await cli(["keys", "list", "--json"], { home: h });
    expect(list.stdout).not.toContain(secret);
    expect(JSON.parse(list.stdout).map((k: { id: string }) => k.id)).toContain(id);
    const sent = await cli(["notify", "with the new key"], {
      home: home(),
      env: { HERALD_API_KEY: secret },
    });
    expect(sent.code, sent.stderr).toBe(0);
    // Not without a confirmation: a script says --yes; a unique prefix of the id will do.
    const unconfirmed = await cli(["keys", "revoke", id], { home: h });
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("add --yes to confirm");
    expect((await cli(["keys", "revoke", id.slice(0, 34), "--yes"], { home: h })).code).toBe(0);
    await waitFor(() => refusedAt(server.url, secret), 1_000);
    const refused = await cli(["notify", "after revoke"], {
      home: home(),
      env: { HERALD_API_KEY: secret },
    });
    expect(refused.code).toBe(3);
  });
});

describe("notify", () => {
  it("takes every option and prints the id (or the resource with --json)", async () => {
    const h = await loggedIn();
    const everyOption = [
      "notify",
      "Deploy finished",
      "-m",
      "api v42",
      "--topic",
      "deploys",
      "--priority",
      "high",
      "--click-url",
      "https://ci.example.com/42",
      "--metadata",
      '{"sha":"abc"}',
      "--meta",
      "env=prod",
      "--ttl",
      "600",
      "--idempotency-key",
      "cli-1",
    ];
    const r = await cli([...everyOption, "--json"], { home: h });
    expect(r.code, r.stderr).toBe(0);
    const n = JSON.parse(r.stdout);
    expect(n).toMatchObject({
      title: "Deploy finished",
      message: "api v42",
      topic: "deploys",
      priority: "high",
      click_url: "https://ci.example.com/42",
      metadata: { sha: "abc", env: "prod" },
      ttl_seconds: 600,
    });
    const again = await cli(everyOption, { home: h });
    expect(again.stdout.trim()).toBe(n.id);
  });

  it("reads the message from standard input with -m -", async () => {
    const h = await loggedIn();
    const r = await cli(["notify", "from stdin", "-m", "-"], {
      home: h,
      stdin: "line one\nline two\n",
    });
    expect(r.code).toBe(0);
    expect((await get(r.stdout.trim())).message).toBe("line one\nline two");
  });

  // A CI job publishing while Herald's one serving process is being replaced (about 1.3 s) or
  // Herald restarts: the connection reset, again and again, then answered.
  it("rides out a server that resets its connections for a few seconds: one notification", async () => {
    const h = await loggedIn();
    const door = await startTcpProxy({ host: "127.0.0.1", port: server.port });
    await door.down();
    let resets = 0;
    const restarting = createServer((socket) => {
      resets++;
      socket.destroy();
    });
    await new Promise<void>((r) => restarting.listen(door.port, "127.0.0.1", r));
    const title = `through a restart ${Date.now()}`;
    const sent = cli(["notify", title], {
      home: h,
      env: { HERALD_URL: `http://127.0.0.1:${door.port}` },
    });
    try {
      // Four tries refused: where three retries (the default before) had given up.
      await waitFor(() => resets >= 4, 15_000);
      await new Promise<void>((r) => restarting.close(() => r()));
      await door.up();
      const r = await sent;
      expect(r.code, r.stderr).toBe(0);
      const rows = await sql<{ id: string }>(
        server.databaseUrl,
        "select id from notification where title = $1",
        [title],
      );
      expect(rows.map((n) => n.id)).toEqual([r.stdout.trim()]);
    } finally {
      await door.close();
    }
  });

  it("names bad input and exits 2", async () => {
    const h = await loggedIn();
    const r = await cli(["notify", "x", "--priority", "urgent", "--ttl", "5"], { home: h });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/priority/);
    expect(r.stderr).toMatch(/ttl_seconds/);
    expect((await cli(["notify"], { home: h })).code).toBe(2);
  });
});

describe("run", () => {
  it("passes a success through and reports exit code, duration, host and the last lines", async () => {
    const h = await loggedIn();
    const r = await cli(
      [
        "run",
        "--topic",
        "jobs",
        "--json",
        "--",
        process.execPath,
        "-e",
        "console.log('hello'); console.log('world')",
      ],
      { home: h },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("hello\nworld\n");
    const id = JSON.parse(r.stdout.trim().split("\n").at(-1) as string).id;
    const n = await get(id);
    expect(n.title).toMatch(/^✓ .* succeeded$/);
    expect(n.priority).toBe("normal");
    expect(n.message).toBe("hello\nworld");
    expect(n.metadata).toMatchObject({
      exit_code: 0,
      host: expect.any(String),
      duration_seconds: expect.any(Number),
    });
  });

  it("passes a failure's exit code through, at high priority, with secrets redacted", async () => {
    const h = await loggedIn();
    const script =
      "console.log('db password=hunter2'); console.log('using ghp_' + 'a'.repeat(36)); console.error('boom'); process.exit(3)";
    const r = await cli(["run", "--tail", "5", "--json", "--", process.execPath, "-e", script], {
      home: h,
    });
    expect(r.code).toBe(3);
    const id = JSON.parse(r.stdout.trim().split("\n").at(-1) as string).id;
    const n = await get(id);
    expect(n.title).toMatch(/failed \(exit 3\)$/);
    expect(n.priority).toBe("high");
    expect(n.metadata.exit_code).toBe(3);
    expect(n.message).toContain("boom");
    expect(n.message).not.toContain("hunter2");
    expect(n.message).not.toContain("a".repeat(36));
    expect(n.message).toContain("[redacted]");
  });
});

describe("listen", () => {
  it("receives what is published meanwhile, acknowledges it, and catches up after a restart", async () => {
    const h = await loggedIn();
    const first = cli(["listen", "--topic", "listen-test", "--count", "1", "--json"], { home: h });
    await devicesListening(server, "listen-test");
    const sender = await loggedIn();
    await cli(["notify", "live one", "--topic", "listen-test"], { home: sender });
    const got = await first;
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ title: "live one", topic: "listen-test" });
    expect(statSync(configFile(h)).mode & 0o777).toBe(0o600);
    // Published while nobody listens:
    await cli(["notify", "missed one", "--topic", "listen-test"], { home: sender });
    await cli(["notify", "missed two", "--topic", "listen-test"], { home: sender });
    // Both fanned out to the listening device (its first delivery is acknowledged already).
    await waitFor(
      async () =>
        (
          await sql<{ n: number }>(
            server.databaseUrl,
            "select count(*)::int as n from delivery d join notification n on n.id = d.notification_id where n.topic = 'listen-test'",
          )
        )[0]?.n === 3,
    );
    const later = await cli(["listen", "--count", "2"], { home: h });
    expect(later.stdout).toMatch(
      /^\d{2}:\d{2}:\d{2} {8}#listen-test {2}missed one\n\d{2}:\d{2}:\d{2} {8}#listen-test {2}missed two\n$/,
    );
    const [row] = await sql<{ n: number }>(
      server.databaseUrl,
      "select count(*)::int as n from delivery d join notification n on n.id = d.notification_id where n.topic = 'listen-test' and d.state = 'delivered'",
    );
    expect(row?.n).toBe(3);
  }, 20_000);
});

describe("listen --exec, history and status", () => {
  it("runs a command with each notification as JSON on its standard input", async () => {
    const h = await loggedIn();
    const file = join(h, "received.json");
    const listening = cli(
      ["listen", "--topic", "exec-test", "--count", "1", "--exec", `cat > ${file}`],
      { home: h },
    );
    await devicesListening(server, "exec-test");
    await cli(["notify", "for the hook", "--topic", "exec-test", "--meta", "k=v"], {
      home: await loggedIn(),
    });
    expect((await listening).code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      title: "for the hook",
      topic: "exec-test",
      metadata: { k: "v" },
    });
  }, 20_000);

  it("says when its command fails, and goes on with the next", async () => {
    const h = await loggedIn();
    const listening = cli(
      ["listen", "--topic", "exec-fails", "--count", "2", "--exec", "cat > /dev/null; exit 3"],
      { home: h },
    );
    await devicesListening(server, "exec-fails");
    const sender = await loggedIn();
    const first = await cli(["notify", "hook one", "--topic", "exec-fails"], { home: sender });
    await cli(["notify", "hook two", "--topic", "exec-fails"], { home: sender });
    const run = await listening;
    // Before, a failing command was passed over in silence.
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `herald: --exec exited with 3 for ${first.stdout.trim()} ("hook one")`,
    );
    expect(run.stderr.match(/--exec exited with 3/g)).toHaveLength(2);
  }, 20_000);

  it("--exec-timeout stops a command that hangs, says so, and goes on with the next", async () => {
    const h = await loggedIn();
    const dir = tempDir("herald-exec-timeout-");
    // The first hangs (and what it started with it); the second writes its title down.
    const cmd = `read -r j; case "$j" in *'"title":"hangs"'*) sleep 600 & wait;; *) echo "$j" > ${dir}/ran;; esac`;
    const listening = cli(
      ["listen", "--topic", "exec-hangs", "--count", "2", "--exec", cmd, "--exec-timeout", "1s"],
      { home: h },
    );
    await devicesListening(server, "exec-hangs");
    const sender = await loggedIn();
    const first = await cli(["notify", "hangs", "--topic", "exec-hangs"], { home: sender });
    await cli(["notify", "after it", "--topic", "exec-hangs"], { home: sender });
    const run = await listening;
    // Before: the flag was unknown, and a command that hangs held every later one for ever.
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `herald: --exec still running after 1s for ${first.stdout.trim()} ("hangs"): stopped`,
    );
    expect(JSON.parse(readFileSync(join(dir, "ran"), "utf8")).title).toBe("after it");
    const bad = await cli(["listen", "--exec-timeout", "1s"], { home: h });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--exec-timeout takes a duration of 1s..24h");
  }, 30_000);

  it("lists history and shows a notification's status per device", async () => {
    const h = await loggedIn();
    const sent = await cli(["notify", "history entry", "--topic", "hist"], { home: h });
    const id = sent.stdout.trim();
    const history = await cli(["history", "--topic", "hist", "--json"], { home: h });
    expect(JSON.parse(history.stdout).map((n: { id: string }) => n.id)).toContain(id);
    const status = await cli(["status", id, "--json"], { home: h });
    expect(JSON.parse(status.stdout)).toMatchObject({ id, devices: expect.any(Array) });
    const human = await cli(["status", id], { home: h });
    expect(human.stdout).toContain("history entry");
    expect(human.stdout).toMatch(/status: /);
  });

  it("schedules with --in and --at, and cancels with herald cancel", async () => {
    const h = await loggedIn();
    const later = await cli(["notify", "in ten minutes", "--in", "10m", "--json"], { home: h });
    expect(later.code, later.stderr).toBe(0);
    const n = JSON.parse(later.stdout);
    expect(n.status).toBe("scheduled");
    const wait = Date.parse(n.deliver_at) - Date.parse(n.created_at);
    expect(Math.abs(wait - 600_000)).toBeLessThan(1000);
    const at = new Date(Date.now() + 7_200_000).toISOString();
    const atRun = await cli(["notify", "at a time", "--at", at, "--json"], { home: h });
    expect(JSON.parse(atRun.stdout).deliver_at).toBe(at);

    const canceled = await cli(["cancel", n.id], { home: h });
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout).toContain("canceled: in ten minutes will not be sent");
    const status = await cli(["status", n.id, "--json"], { home: h });
    expect(JSON.parse(status.stdout).status).toBe("canceled");

    const both = await cli(["notify", "x", "--in", "1m", "--at", at], { home: h });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --at or --in, not both");
    const badIn = await cli(["notify", "x", "--in", "soon"], { home: h });
    expect(badIn.code).toBe(2);
    expect(badIn.stderr).toContain("--in takes a duration");
    const tooFar = await cli(["notify", "x", "--in", "8d"], { home: h });
    expect(tooFar.code).toBe(2);
    expect(tooFar.stderr).toContain("--in must be 1s..7d");
    const past = await cli(["notify", "x", "--at", "2020-01-01T00:00:00Z"], { home: h });
    expect(past.code).not.toBe(0);
    expect(past.stderr).toContain("deliver_at: must not be in the past");
    const sent = await cli(["notify", "at once"], { home: h });
    await waitFor(async () => {
      const s = await cli(["status", sent.stdout.trim(), "--json"], { home: h });
      return !["queued", "delivering"].includes(JSON.parse(s.stdout).status);
    });
    const late = await cli(["cancel", sent.stdout.trim()], { home: h });
    expect(late.code).not.toBe(0);
    expect(late.stderr).toMatch(/nothing left to cancel|already sent/);
  });

  it("manages webhook endpoints: create (secret once), list, attempts, rotate, delete", async () => {
    const h = await loggedIn();
    const hooks = await startWebhookReceiver();
    try {
      const made = await cli(["webhooks", "create", hooks.url, "--event", "notification.created"], {
        home: h,
      });
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr).toContain("shown once");
      const secret = made.stdout.trim();
      expect(secret).toMatch(/^whsec_/);
      hooks.trust(secret);
      const listed = await cli(["webhooks", "list", "--json"], { home: h });
      const [endpoint] = JSON.parse(listed.stdout);
      expect(endpoint).toMatchObject({ url: hooks.url, enabled: true });
      expect(listed.stdout).not.toContain(secret.slice(6));
      await cli(["notify", "hooked from the CLI"], { home: h });
      await waitFor(() => hooks.received.length >= 1);
      expect(hooks.received[0]?.verifiedBy).toEqual([secret]);
      await waitFor(async () => {
        const a = await cli(["webhooks", "attempts", endpoint.id, "--json"], { home: h });
        return JSON.parse(a.stdout).length >= 1;
      });
      const human = await cli(["webhooks", "attempts", endpoint.id.slice(0, 13)], { home: h });
      expect(human.stdout).toMatch(/notification\.created\s+200/);
      const rotated = await cli(["webhooks", "rotate", endpoint.id, "--overlap", "0"], { home: h });
      expect(rotated.stdout.trim()).toMatch(/^whsec_/);
      expect(rotated.stdout.trim()).not.toBe(secret);
      const bad = await cli(["webhooks", "create", hooks.url, "--event", "nope"], { home: h });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("event_types[0]");
      const gone = await cli(["webhooks", "delete", endpoint.id, "--yes"], { home: h });
      expect(gone.stdout).toContain(`deleted ${endpoint.id}`);
      expect(JSON.parse((await cli(["webhooks", "list", "--json"], { home: h })).stdout)).toEqual(
        [],
      );
    } finally {
      await hooks.close();
    }
  });
});
