/**
 * `herald ask` gates a script on a person (issue 14): the question reaches `herald listen` on
 * another machine, whose number keys answer it; ask prints the chosen id (or the typed reply)
 * and exits 0, 5 when denied, 124 when nobody answered in time; stopped by any ending signal, it
 * withdraws the question first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor, devicesListening, spawnCli } from "../helpers/cli.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { cli, loggedIn } = cliFor(() => server);

/** `herald listen` on a terminal of its own, with its output as it comes and a key to press. */
async function listener(topic: string) {
  const stop = new AbortController();
  let press: ((key: string) => void) | undefined;
  let out = "";
  const running = cli(["listen", "--topic", topic], {
    home: await loggedIn(),
    signal: stop.signal,
    onKey: (handler) => {
      press = handler;
      return () => {};
    },
    onStdout: (s) => {
      out += s;
    },
  });
  await devicesListening(server, topic);
  return {
    output: () => out,
    type: (keys: string[]) => {
      for (const k of keys) press?.(k);
    },
    async stop() {
      stop.abort();
      return running;
    },
  };
}

const asking = async (topic: string, extra: string[]) =>
  cli(["ask", "Deploy api v42 to production?", "--topic", topic, ...extra], {
    home: await loggedIn(),
  });

describe("herald ask", () => {
  it("prints the chosen action's id and exits 0 when the person presses its number", async () => {
    const l = await listener("gate");
    const asked = asking("gate", ["--action", "yes:Deploy", "--action", "no:Cancel"]);
    await waitFor(() => l.output().includes("answer: 1 Deploy  ·  2 Cancel"));
    l.type(["1"]);
    const r = await asked;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("yes\n");
    expect(r.stderr).toMatch(/asked \([0-9a-f-]{36}\); waiting up to 10m for an answer/);
    await waitFor(() => l.output().includes("✓ answered: Deploy"));
    const shown = await l.stop();
    expect(shown.stdout).toContain("Deploy api v42 to production?");
    expect(shown.stdout).toContain("✓ answered: Deploy");
  });

  it("exits 5 when the chosen action is one given with --deny", async () => {
    const l = await listener("deny");
    const asked = asking("deny", [
      "--action",
      "yes:Deploy",
      "--action",
      "no:Cancel",
      "--deny",
      "no",
    ]);
    await waitFor(() => l.output().includes("answer:"));
    l.type(["2"]);
    const r = await asked;
    expect(r.code).toBe(5);
    expect(r.stdout).toBe("no\n");
    await l.stop();
  });

  it("prints a typed reply; Escape gives up typing, Backspace corrects it", async () => {
    const l = await listener("reply");
    const asked = asking("reply", ["--action", "yes:Deploy", "--reply", "why:Ask why", "--json"]);
    await waitFor(() => l.output().includes("2 Ask why…"));
    l.type(["2", "n", "o", "\x1b"]); // typed, then given up
    l.type(["2", ..."is CI greem", "\x7f", "n", "?", "\r"]);
    const r = await asked;
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ outcome: "answered", action_id: "why", text: "is CI green?" });
    expect(json.device_id).toMatch(/^[0-9a-f-]{36}$/);
    await l.stop();
  });

  it("exits 130 when stopped with Ctrl-C while it waits, and withdraws the question", async () => {
    const l = await listener("ctrl-c");
    const stop = new AbortController();
    const asked = cli(["ask", "Restart db-3?", "--topic", "ctrl-c", "--action", "yes:Restart"], {
      home: await loggedIn(),
      signal: stop.signal,
    });
    await waitFor(() => l.output().includes("answer: 1 Restart"));
    stop.abort();
    const r = await asked;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/stopped waiting; the question \([0-9a-f-]{36}\) was withdrawn/);
    await waitFor(() => l.output().includes("✗ withdrawn: its asker stopped waiting"));
    await l.stop();
  });

  // The installed command, sent a signal as a harness, a closed terminal or a cancelled job does.
  it.each([
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)("withdraws the question when %s stops it, and exits %i", async (signal, code) => {
    const topic = `stopped-${signal.toLowerCase()}`;
    const l = await listener(topic);
    const h = await loggedIn();
    const child = spawnCli(
      ["ask", "Rotate keys?", "--topic", topic, "--action", "yes:Rotate"],
      h,
      server.url,
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise((r) => child.once("exit", (c) => r(c)));
    await waitFor(() => l.output().includes("answer: 1 Rotate"));
    child.kill(signal);
    expect(await exited, stderr).toBe(code);
    expect(stderr).toMatch(/stopped waiting; the question \([0-9a-f-]{36}\) was withdrawn/);
    await waitFor(() => l.output().includes("✗ withdrawn: its asker stopped waiting"));
    await l.stop();
  });

  // A server restarted (a deploy, a crashed serving process replaced) while a script waits on a
  // person: the wait goes on from where it was, and the answer given meanwhile still counts.
  it("waits on through the server going away and coming back, and takes the answer", async () => {
    const l = await listener("restart");
    const door = await startTcpProxy({ host: "127.0.0.1", port: server.port });
    let stderr = "";
    const asked = cli(
      ["ask", "Roll back api?", "--topic", "restart", "--action", "yes:Roll back"],
      {
        home: await loggedIn(),
        env: { HERALD_URL: `http://127.0.0.1:${door.port}` },
        onStderr: (s) => {
          stderr += s;
        },
      },
    );
    try {
      await waitFor(() => l.output().includes("answer: 1 Roll back"));
      await waitFor(() => stderr.includes("waiting up to 10m"));
      await door.down(); // the wait's connection cut, and new ones refused
      await waitFor(() => /connection lost \(.+\), retrying in [\d.]+ s/.test(stderr));
      l.type(["1"]); // answered while the asker cannot reach the server
      await waitFor(() => l.output().includes("✓ answered: Roll back"));
      await door.up();
      const r = await asked;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("yes\n");
      expect(r.stderr).toMatch(/retrying in [\d.]+ s\n(.*\n)*reconnected\n$/);
    } finally {
      await door.close();
      await l.stop();
    }
  });

  it("stopped while the server is away, says the question could not be withdrawn", async () => {
    const l = await listener("away-stop");
    const door = await startTcpProxy({ host: "127.0.0.1", port: server.port });
    const stop = new AbortController();
    let stderr = "";
    const asked = cli(["ask", "Rotate keys?", "--topic", "away-stop", "--action", "yes:Rotate"], {
      home: await loggedIn(),
      env: { HERALD_URL: `http://127.0.0.1:${door.port}` },
      signal: stop.signal,
      onStderr: (s) => {
        stderr += s;
      },
    });
    try {
      await waitFor(() => l.output().includes("answer: 1 Rotate"));
      await door.down();
      await waitFor(() => stderr.includes("connection lost ("));
      stop.abort();
      const r = await asked;
      expect(r.code).toBe(130);
      expect(r.stderr).toMatch(
        /stopped waiting; the question \([0-9a-f-]{36}\) could not be withdrawn \(the server did not answer\): it expires at \S+/,
      );
    } finally {
      await door.close();
      await l.stop();
    }
  });

  it("--timeout 3s: exits 124, and the listener stops offering the buttons then", async () => {
    const l = await listener("late");
    const started = Date.now();
    const r = await asking("late", ["--action", "yes:Deploy", "--timeout", "3s"]);
    expect(r.code).toBe(124);
    expect(r.stderr).toContain("no answer (timed out)");
    // Not at the question's 30 s ttl: when its asker gave up.
    await waitFor(() => l.output().includes("✗ withdrawn: its asker stopped waiting"));
    expect(Date.now() - started).toBeLessThan(15_000);
    // The listener no longer takes an answer for it: the key does nothing.
    l.type(["1"]);
    const shown = await l.stop();
    expect(shown.stdout).not.toContain("✓ answered");
  });

  it("exits 124 when nobody answers in time, and 2 without an action", async () => {
    const r = await asking("nobody", ["--action", "yes:Deploy", "--timeout", "2s"]);
    expect(r.code).toBe(124);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("no answer (timed out)");

    const usage = await asking("nobody", []);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("give at least one --action ID:LABEL");
    const bad = await asking("nobody", ["--action", "Deploy"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--action takes ID:LABEL");
  });
});
