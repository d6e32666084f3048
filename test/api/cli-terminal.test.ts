/**
 * The installed CLI in a real terminal (a pseudo-terminal made by util-linux's `script`):
 * Ctrl-C typed at `login --device` ends it at once and clears its spinner; `listen` says what
 * it listens for, marks a high-priority notification in colour, and shows an outage as one line
 * rewritten in place, then "reconnected" as soon as the stream is back.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor, streamOpen } from "../helpers/cli.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { loggedIn } = cliFor(() => server);
const bin = join(import.meta.dirname, "../../bin/herald.mjs");

/**
 * `herald ARGS` on a terminal; returns what the terminal showed, and a way to type. `after`:
 * shell commands run after it, in a shell with job control (as a person's is), which then
 * stands between the terminal and herald; with `background`, herald runs as a job in the
 * background (`&`) meanwhile.
 */
function onTerminal(
  args: string,
  env: Record<string, string>,
  after?: string,
  { background = false } = {},
) {
  const herald = `'${process.execPath}' '${bin}' ${args}`;
  const then = background ? "&" : ";";
  const child = spawn(
    "script",
    [
      "-qfec",
      after ? `bash -c 'set -m; ${herald} ${then} ${after}'` : `exec ${herald}`,
      "/dev/null",
    ],
    {
      env: { ...process.env, HERALD_URL: server.url, TERM: "xterm", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let screen = "";
  child.stdout.on("data", (d: Buffer) => {
    screen += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { screen: () => screen, type: (s: string) => child.stdin.write(s), exited, child };
}

describe("on a terminal", () => {
  it("Ctrl-C ends login --device at once", async () => {
    const t = onTerminal("login --device", {
      HOME: "/tmp",
      XDG_CONFIG_HOME: "/tmp/herald-pty-cfg",
    });
    await waitFor(() => t.screen().includes("waiting for approval"), 10_000);
    const typed = Date.now();
    t.type("\x03");
    expect(await t.exited).toBe(130);
    expect(Date.now() - typed).toBeLessThan(2_000);
    expect(t.screen()).toContain("login canceled");
    // The spinner's last frame is cleared, not left beside the message.
    const ending = t.screen().slice(t.screen().lastIndexOf("waiting for approval…"));
    expect(ending).toContain("\r\x1b[Kherald: login canceled");
  });

  it("Ctrl-C or Ctrl-D at a prompt ends the command, nothing done", async () => {
    for (const key of ["\x03", "\x04"]) {
      const t = onTerminal("login", { HOME: "/tmp", XDG_CONFIG_HOME: "/tmp/herald-pty-cfg" });
      await waitFor(() => t.screen().includes("Email:"), 10_000);
      t.type(key);
      // Before: the prompt never settled, and Node ended the process with a warning (exit 13).
      expect(await t.exited).toBe(130);
      expect(t.screen()).toContain("herald: canceled: nothing done");
      expect(t.screen()).not.toContain("Warning");
    }
  });

  it("listen shows a high-priority notification marked in colour", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    const t = onTerminal("listen --topic pty --count 1", env);
    await waitFor(() =>
      t.screen().includes("listening for topic pty (1 notification); Ctrl-C stops"),
    );
    await notify(server, {
      title: "Disk full",
      topic: "pty",
      priority: "high",
      message: "db-1 at 99%",
    });
    expect(await t.exited).toBe(0);
    expect(t.screen()).toContain("\x1b[1;31mHIGH\x1b[0m");
    // The terminal turns \n into \r\n.
    expect(t.screen().replaceAll("\r\n", "\n")).toContain(
      "#pty  \x1b[1mDisk full\x1b[0m\n          db-1 at 99%",
    );
  });

  it("Ctrl-Z at listen stops it as a job, its terminal given back; fg takes the keys again", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    // The shell: when herald stops, say so and how the terminal is set, then bring it back.
    const t = onTerminal(
      "listen --topic jobs",
      env,
      `echo "stopped $?"; stty -a | grep -o -- "-*icanon"; fg; echo "ended $?"`,
    );
    await waitFor(() => t.screen().includes("listening for topic jobs"));
    t.type("\x1a");
    // Before: in raw mode Ctrl-Z was a key nobody took; herald went on, and the shell waited.
    const settings = /stopped (\d+)\r?\n(-?icanon)\r?\n/;
    await waitFor(() => settings.test(t.screen()), 5_000);
    // Stopped (128 + SIGTSTP), its terminal cooked again (raw mode would show -icanon).
    expect(settings.exec(t.screen())?.slice(1)).toEqual(["148", "icanon"]);
    await notify(server, {
      title: "Deploy while stopped?",
      topic: "jobs",
      actions: [{ id: "yes", label: "Deploy" }],
    });
    await waitFor(() => t.screen().includes("answer: 1 Deploy"), 10_000);
    // Its keys are raw again: "1" answers without Enter (a cooked terminal would hold it).
    t.type("1");
    await waitFor(() => t.screen().includes("✓ answered: Deploy"), 5_000);
    expect(t.screen()).toContain("✓ answered: Deploy");
    t.type("\x03");
    await waitFor(() => t.screen().includes("ended 0"), 5_000);
    expect(t.screen()).toContain("ended 0");
    expect(await t.exited).toBe(0);
  });

  it("listen in the background (&) shows what arrives and leaves the keys to the shell; fg gives them", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    const shell = `read -r line; echo "shell read $line"; fg; echo "ended $?"`;
    const t = onTerminal("listen --topic bg-jobs", env, shell, { background: true });
    const shows = async (text: string, ms = 10_000) => {
      await waitFor(() => t.screen().includes(text), ms);
      expect(t.screen()).toContain(text);
    };
    // Before: it set the terminal's mode at once, and the terminal stopped it (SIGTTOU): the
    // job showed nothing until someone brought it back with fg.
    await shows("listening for topic bg-jobs");
    await notify(server, { title: "Built while you typed", topic: "bg-jobs" });
    await shows("Built while you typed");
    // What is typed goes to the shell (herald reading it would be stopped by SIGTTIN).
    t.type("hello\r");
    await shows("shell read hello");
    // In the foreground (fg, which sends a running job no SIGCONT), its keys are raw again.
    await notify(server, {
      title: "Deploy now?",
      topic: "bg-jobs",
      actions: [{ id: "yes", label: "Deploy" }],
    });
    await shows("answer: 1 Deploy");
    t.type("1");
    await shows("✓ answered: Deploy");
    t.type("\x03");
    await shows("ended 0");
    expect(await t.exited).toBe(0);
  });

  it("listen shows a notification with a replace key in place of the one it replaces", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    const t = onTerminal("listen --topic deploys --count 2", env);
    await waitFor(() => t.screen().includes("listening for topic deploys"));
    await notify(server, { title: "deploy started", topic: "deploys", replace_key: "web" });
    await waitFor(() => t.screen().includes("deploy started"));
    const before = t.screen().length;
    await notify(server, { title: "deploy finished", topic: "deploys", replace_key: "web" });
    expect(await t.exited).toBe(0);
    // The cursor goes back over the entry it replaces, clears it, and writes the new one there.
    const after = t.screen().slice(before);
    const esc = String.fromCharCode(27);
    const back = new RegExp(`^${esc}\\[\\d+A${esc}\\[0J`);
    expect(after).toMatch(back);
    expect(after).toContain("deploy finished");
  });

  it("ask --timeout 3s: the asker gives up, and the listener's buttons go with it", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    const listener = onTerminal("listen --topic pty-ask", env);
    await waitFor(() => listener.screen().includes("listening for topic pty-ask"));
    const asker = onTerminal(
      "ask 'Deploy v42?' --topic pty-ask --action yes:Deploy --timeout 3s",
      env,
    );
    await waitFor(() => listener.screen().includes("answer: 1 Deploy"));
    expect(await asker.exited).toBe(124);
    expect(asker.screen()).toContain("no answer (timed out)");
    await waitFor(() => listener.screen().includes("✗ withdrawn: its asker stopped waiting"));
    // Its key no longer answers anything.
    listener.type("1");
    listener.type("\x03");
    expect(await listener.exited).toBe(0);
    expect(listener.screen()).not.toContain("answered");
  });

  it("listen shows an outage as one line rewritten in place, and says at once when it is back", async () => {
    // A door in front of the server that can slam every connection, as a restart does.
    const door = await startTcpProxy({ host: "127.0.0.1", port: server.port });
    const url = `http://127.0.0.1:${door.port}`;
    const h = await loggedIn();
    const t = onTerminal(`listen --url ${url} --topic outage`, {
      HOME: h,
      XDG_CONFIG_HOME: join(h, ".config"),
    });
    await waitFor(() => t.screen().includes("Ctrl-C stops"));
    await streamOpen(server, "outage");
    await door.down();
    await waitFor(() => (t.screen().match(/connection lost/g) ?? []).length >= 2, 10_000);
    await door.up();
    const back = Date.now();
    await waitFor(() => t.screen().includes("reconnected"), 10_000);
    expect(Date.now() - back).toBeLessThan(6_000);
    t.type("\x03");
    await t.exited;
    await door.close();
    const screen = t.screen();
    // Each retry rewrites the line: no newline between them, and "reconnected" replaces them.
    const outage = screen.slice(screen.indexOf("connection lost"), screen.indexOf("reconnected"));
    expect(outage).not.toMatch(/\n/);
    expect(outage.startsWith("connection lost")).toBe(true);
    expect(outage.split("\r\x1b[Kconnection lost ").length).toBeGreaterThanOrEqual(2);
    expect(screen).toContain("\r\x1b[Kreconnected\r\n");
  }, 30_000);

  it("listen takes a stream that went silent for dead, and catches up on a new one", async () => {
    // The network drops the stream without closing it: nothing more arrives, and no error.
    const door = await startTcpProxy({ host: "127.0.0.1", port: server.port });
    const h = await loggedIn();
    const t = onTerminal(`listen --url http://127.0.0.1:${door.port} --topic silent`, {
      HOME: h,
      XDG_CONFIG_HOME: join(h, ".config"),
    });
    await waitFor(() => t.screen().includes("Ctrl-C stops"));
    await streamOpen(server, "silent");
    door.stall();
    expect(
      (await notify(server, { title: "said during the silence", topic: "silent" })).status,
    ).toBe(202);
    // The server keeps alive every 0.5 s: nothing for 2 × 0.5 + 5 s is a dead stream.
    await waitFor(() => t.screen().includes("the server said nothing for 6 s"), 15_000);
    await waitFor(() => t.screen().includes("said during the silence"), 15_000);
    expect(t.screen()).toContain("reconnected");
    t.type("\x03");
    expect(await t.exited).toBe(0);
    await door.close();
  }, 30_000);

  it("listen does not count the time its --exec command takes as the server's silence", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    // Longer than the 6 s a silent stream gets (keepalives every 0.5 s), for each notification.
    const t = onTerminal(`listen --topic slow-exec --count 2 --exec 'sleep 7; echo ran'`, env);
    await waitFor(() => t.screen().includes("Ctrl-C stops"));
    await streamOpen(server, "slow-exec");
    for (const title of ["first", "second"]) {
      expect((await notify(server, { title, topic: "slow-exec" })).status).toBe(202);
    }
    expect(await t.exited).toBe(0);
    expect(t.screen().match(/ran/g)).toHaveLength(2);
    expect(t.screen()).not.toContain("connection lost");
  }, 30_000);
});
