/**
 * `herald devices topics`: the owner sets which topics a device (a phone) receives, by id prefix;
 * the fan-out follows it, `devices list` shows it, and `--all` lifts it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushDevice, theOwner } from "../helpers/accounts.ts";
import { cliFor } from "../helpers/cli.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});
const { cli, loggedIn, get } = cliFor(() => server);

describe("herald devices topics", () => {
  it("sets a phone's topics, the fan-out follows them, and --all lifts them", async () => {
    const owner = await theOwner(server);
    const { deviceId } = await pushDevice(server, owner, "ios", {
      case: "pushToken",
      value: "d1".padStart(64, "0"),
    });
    const home = await loggedIn();
    const set = await cli(
      ["devices", "topics", deviceId.slice(0, 8), "--topic", "oncall", "--topic", "default/*"],
      { home },
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(`topics of ios device: oncall, default/*\n`);
    const listed = await cli(["devices", "list"], { home });
    expect(listed.stdout).toContain("oncall,default/*");

    // Only `oncall` of another project reaches it; `default/*` takes every topic of default.
    const other = await cli(["projects", "create", "side"], { home });
    expect(other.code, other.stderr).toBe(0);
    const sent = async (topic: string, project: string) => {
      const r = await cli(["notify", `to ${topic}`, "--topic", topic, "--project", project], {
        home,
      });
      expect(r.code, r.stderr).toBe(0);
      const id = r.stdout.trim();
      await waitFor(async () => (await get(id)).status !== "queued", 10_000);
      return (await cli(["status", id, "--json", "--project", project], { home })).stdout;
    };
    expect(await sent("oncall", "side")).toContain(deviceId);
    expect(await sent("builds", "side")).not.toContain(deviceId);
    expect(await sent("builds", "default")).toContain(deviceId);

    const all = await cli(["devices", "topics", deviceId, "--all"], { home });
    expect(all.stdout).toBe("topics of ios device: every topic\n");
    expect(await sent("builds", "side")).toContain(deviceId);
    // The list says so as well; before, "all", as it says for a device of the topic "all".
    const row = async () =>
      (await cli(["devices", "list"], { home })).stdout
        .split("\n")
        .find((l) => l.startsWith(deviceId));
    expect(await row()).toMatch(/ every topic /);
    await cli(["devices", "topics", deviceId, "--topic", "all"], { home });
    expect(await row()).toMatch(/ all /);

    // Said before anything is sent: a topic out of its characters, or neither flag.
    const bad = await cli(["devices", "topics", deviceId, "--topic", "On Call"], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("topics[0]: must be a topic");
    const none = await cli(["devices", "topics", deviceId], { home });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("give --topic T (repeat it for several), or --all");
  });
});
