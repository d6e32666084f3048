/**
 * Habits of good CLIs: --version, help with every flag and an example, our own words for a bad
 * flag, standard input read only when asked (a shell loop's input is not swallowed, an idle pipe
 * does not hang), the installed command run as a person runs it, and `herald run` passing a
 * signal on to its command instead of leaving it running.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor, configFile, home } from "../helpers/cli.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { alive } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());
const { cli, loggedIn, get } = cliFor(() => server);
const bin = join(import.meta.dirname, "../../bin/herald.mjs");

/** The installed command, through a real shell, as a person types it. */
function sh(
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], {
      env: { ...process.env, HERALD: `${process.execPath} ${bin}`, HERALD_URL: server.url, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

describe("help and version", () => {
  it("--version prints the version", async () => {
    const r = await cli(["--version"], { home: home() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^herald \d+\.\d+\.\d+\n$/);
  });
  it("help notify and notify --help list every flag with its default, and an example", async () => {
    const a = await cli(["help", "notify"], { home: home() });
    const b = await cli(["notify", "--help"], { home: home() });
    expect(a.stdout).toBe(b.stdout);
    for (const flag of [
      "--message",
      "--topic",
      "--priority",
      "--click-url",
      "--metadata",
      "--meta",
      "--ttl",
      "--idempotency-key",
    ]) {
      expect(a.stdout).toContain(flag);
    }
    expect(a.stdout).toContain("(default: normal)");
    expect(a.stdout).toMatch(/example:\n {2}herald notify "Deploy finished"/);
  });
  it("answers an unknown flag in its own words", async () => {
    const r = await cli(["notify", "x", "--prority", "high"], { home: home() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `herald notify: unknown option --prority\nusage: ${"herald notify TITLE [-m MESSAGE] [--topic T] [--priority low|normal|high] [--click-url URL] [--metadata JSON | --meta k=v …] [--ttl SECONDS] [--at TIME | --in DURATION] [--idempotency-key KEY]"}\nmore: herald help notify\n`,
    );
  });
});

describe("what a flag takes", () => {
  it("a --topic of listen out of its characters is told them, not the regular expression", async () => {
    const h = await loggedIn();
    const r = await cli(["listen", "--topic", "Deploys"], { home: h });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `topics[0]: must be a topic ("deploys"), a project's topic ("ci/deploys"), or * for every topic ("ci/*" for a project's) (for "Deploys", use "deploys")`,
    );
    // Refused before a device was registered (and saved) for it.
    expect(readFileSync(configFile(h), "utf8")).not.toContain("devices");
  });

  it("a count, a limit or a tail that is not a whole number in range is a usage error naming it", async () => {
    const h = await loggedIn();
    // Before: `listen --count abc` listened for ever (NaN), `--count 0` stopped at once saying
    // "(0 notification)", and `webhooks attempts --limit abc` sent NaN to the server.
    for (const [argv, said] of [
      [["listen", "--count", "abc"], '--count takes a whole number, 1 or more; got "abc"'],
      [["listen", "--count=0"], '--count takes a whole number, 1 or more; got "0"'],
      [["listen", "--count", "1.5"], '--count takes a whole number, 1 or more; got "1.5"'],
      [["history", "--limit", "101"], '--limit takes a whole number, 1 to 100; got "101"'],
      [
        ["webhooks", "attempts", "0a1b", "--limit", "abc"],
        '--limit takes a whole number, 1 to 100; got "abc"',
      ],
      [["run", "--tail", "x", "--", "true"], '--tail takes a whole number, 0 or more; got "x"'],
      [
        ["webhooks", "rotate", "0a1b", "--overlap", "1h"],
        '--overlap takes a whole number, 0 to 604800; got "1h"',
      ],
    ] as const) {
      const r = await cli([...argv], { home: h });
      expect(r.stderr, argv.join(" ")).toBe(`herald: ${said}\n`);
      expect(r.code, argv.join(" ")).toBe(2);
    }
    // A value that begins with "-" is the flag's: before, `--limit -3` said "--limit needs a
    // value", where the number is what is wrong.
    for (const [argv, said] of [
      [["history", "--limit", "-3"], '--limit takes a whole number, 1 to 100; got "-3"'],
      [["listen", "--count", "-1"], '--count takes a whole number, 1 or more; got "-1"'],
    ] as const) {
      const r = await cli([...argv], { home: h });
      expect(r.stderr, argv.join(" ")).toBe(`herald: ${said}\n`);
    }
    // A flag after it is still a flag: its value is missing.
    const missing = await cli(["history", "--limit", "--json"], { home: h });
    expect(missing.stderr).toContain("herald history: --limit needs a value\n");
    // Said before a device was registered for the listen.
    expect(readFileSync(configFile(h), "utf8")).not.toContain("devices");
    const key = await cli(["keys", "revoke", "nope"], { home: h });
    expect(key.stderr).toContain('"nope" is not an API key id');
  });
});

describe("the server's URL", () => {
  it("without its scheme is a usage error naming where it came from, not the server down", async () => {
    const flag = await cli(["notify", "x", "--api-key", "hk_x", "--url", "herald.example.com"], {
      home: home(),
    });
    expect([flag.code, flag.stderr]).toEqual([
      2,
      'herald: --url is "herald.example.com", not a server\'s URL: give it whole, as https://herald.example.com or http://127.0.0.1:8080\n',
    ]);
    const env = await sh("$HERALD notify x", {
      HERALD_URL: "localhost:8080",
      HERALD_API_KEY: "hk_x",
    });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('HERALD_URL is "localhost:8080", not a server\'s URL');
  });
});

describe("standard input", () => {
  it("with nothing else given, its first line is the title and the rest the message", async () => {
    const h = await loggedIn();
    const r = await cli(["notify"], { home: h, stdin: "Backup done\n12 GB in 4 min\n" });
    expect(r.code, r.stderr).toBe(0);
    expect(await get(r.stdout.trim())).toMatchObject({
      title: "Backup done",
      message: "12 GB in 4 min",
    });
  });
  it("a message that begins with a dash is sent as typed (before: refused as a missing value)", async () => {
    const h = await loggedIn();
    const ok = await cli(["notify", "Freezer", "-m", "-18 °C, as set"], { home: h });
    expect(ok.code, ok.stderr).toBe(0);
    expect(await get(ok.stdout.trim())).toMatchObject({ message: "-18 °C, as set" });
  });
  it("a title that begins with a dash is a title, after `--` too (before: an unknown option, or dropped)", async () => {
    const h = await loggedIn();
    const cold = await cli(["notify", "-5 °C outside", "--topic", "weather"], { home: h });
    expect(cold.code, cold.stderr).toBe(0);
    expect(await get(cold.stdout.trim())).toMatchObject({
      title: "-5 °C outside",
      topic: "weather",
    });
    const flagged = await cli(["notify", "--topic", "ci", "--", "-f failed", "again"], { home: h });
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(await get(flagged.stdout.trim())).toMatchObject({
      title: "-f failed again",
      topic: "ci",
    });
    // A letter after the dash is a flag, as before: a mistyped one is said so.
    const typo = await cli(["notify", "-x"], { home: h });
    expect([typo.code, typo.stderr.split("\n")[0]]).toEqual([
      2,
      "herald notify: unknown option -x",
    ]);
  });
  it("is left to a shell loop: one notification per line, none swallowed", async () => {
    const env = { HERALD_API_KEY: server.apiKey };
    const r = await sh(
      `printf 'alpha\nbeta\ngamma\n' | while read l; do $HERALD notify "loop $l"; done`,
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(3);
  });
  it("an idle pipe does not hang notify", async () => {
    // Standard input is a pipe that stays open and silent for a minute; notify must give up on
    // it at once (it waits 200 ms), not when it ends. Measured against the same command's start
    // (--version) in the same shell, so a loaded machine's slow start is not counted.
    const r = await sh(
      `ms() { echo $(( $(date +%s%N) / 1000000 )); }
      exec 3< <(sleep 60); pipe=$!
      t=$(ms); $HERALD --version >/dev/null; start=$(( $(ms) - t ))
      t=$(ms); $HERALD notify <&3; code=$?; took=$(( $(ms) - t ))
      kill $pipe; echo "exit=$code ms=$took start=$start" >&2`,
      { HERALD_API_KEY: server.apiKey },
    );
    expect(r.stderr).toContain("a title is required");
    const m = /exit=(\d+) ms=(\d+) start=(\d+)/.exec(r.stderr);
    expect(m?.[1]).toBe("2");
    expect(Number(m?.[2]) - Number(m?.[3])).toBeLessThan(2_000);
    expect(r.ms).toBeLessThan(30_000);
  });
});

describe("ids and --json", () => {
  it("take a unique prefix of an id, say when one is ambiguous, and --json shows whole resources", async () => {
    const h = await loggedIn();
    const first = JSON.parse((await cli(["notify", "prefix one", "--json"], { home: h })).stdout);
    await cli(["notify", "prefix two", "--json"], { home: h });
    // Time-ordered ids of notifications published together share their first characters.
    const ambiguous = await cli(["status", first.id.slice(0, 4)], { home: h });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/is ambiguous: .*\(prefix one\)/);
    // The random end of an id is unique.
    const status = await cli(["status", first.id.slice(0, 34), "--json"], { home: h });
    expect(status.code, status.stderr).toBe(0);
    const n = JSON.parse(status.stdout);
    expect(n).toMatchObject({ id: first.id, title: "prefix one", deliveries: expect.any(Object) });
    expect(n.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(first.created_at).toBe(n.created_at);
    const history = JSON.parse((await cli(["history", "--json"], { home: h })).stdout);
    expect(history[0]).toHaveProperty("created_at");
    expect(history[0]).toHaveProperty("deliveries");
  });
});

describe("herald run, asked to end", () => {
  it("passes the signal on to its command, waits for it, and reports how it ended", async () => {
    // Herald alone gets the signal, as from `kill` or a CI runner cancelling a job.
    const waiting = "console.log('up ' + process.pid); setInterval(() => {}, 1000)";
    const child = spawn(
      process.execPath,
      [bin, "run", "--json", "--", process.execPath, "-e", waiting],
      {
        env: { ...process.env, HERALD_URL: server.url, HERALD_API_KEY: server.apiKey },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise((r) => child.once("exit", (code) => r(code)));
    await waitFor(() => /up \d+/.test(out), 20_000);
    const command = Number(/up (\d+)/.exec(out)?.[1]);
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
    expect(alive(command)).toBe(false);
    const n = await get(JSON.parse(out.trim().split("\n").at(-1) as string).id);
    expect(n.title).toMatch(/failed \(exit 143, SIGTERM\)$/);
    expect(n.priority).toBe("high");
    expect(n.metadata).toMatchObject({ exit_code: 143, signal: "SIGTERM" });
  });
});
