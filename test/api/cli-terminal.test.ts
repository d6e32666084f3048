/**
 * The installed CLI in a real terminal (a pseudo-terminal made by util-linux's `script`):
 * Ctrl-C typed at `login --device` ends it at once, and `listen` marks a high-priority
 * notification in colour.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor } from "../helpers/cli.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { loggedIn } = cliFor(() => server);
const bin = join(import.meta.dirname, "../../bin/herald.mjs");

/** `herald ARGS` on a terminal; returns what the terminal showed, and a way to type. */
function onTerminal(args: string, env: Record<string, string>) {
  const child = spawn(
    "script",
    ["-qfec", `exec '${process.execPath}' '${bin}' ${args}`, "/dev/null"],
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
  });

  it("listen shows a high-priority notification marked in colour", async () => {
    const h = await loggedIn();
    const env = { HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    const t = onTerminal("listen --topic pty --count 1", env);
    await new Promise((r) => setTimeout(r, 1500)); // registered and subscribed (nothing to wait on)
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
});
