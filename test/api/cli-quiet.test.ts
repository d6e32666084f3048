/**
 * `herald devices quiet` (issue 25): sets a device's quiet hours by id prefix, in a time zone
 * given or this machine's, lists them, and turns them off; a wrong time zone is said plainly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushDevice, theOwner } from "../helpers/accounts.ts";
import { cliFor } from "../helpers/cli.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});
const { cli, loggedIn } = cliFor(() => server);

describe("herald devices quiet", () => {
  it("sets, lists and clears a device's quiet hours", async () => {
    const owner = await theOwner(server);
    const { deviceId } = await pushDevice(server, owner, "ios", {
      case: "pushToken",
      value: "c1".padStart(64, "0"),
    });
    const home = await loggedIn();
    const set = await cli(
      [
        "devices",
        "quiet",
        deviceId.slice(0, 8),
        "--from",
        "22:00",
        "--to",
        "07:00",
        "--tz",
        "Europe/Paris",
      ],
      { home },
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("22:00–07:00 Europe/Paris");
    const listed = await cli(["devices", "list"], { home });
    expect(listed.stdout).toMatch(/QUIET HOURS/);
    expect(listed.stdout).toContain("22:00–07:00 Europe/Paris");
    const wrong = await cli(
      ["devices", "quiet", deviceId, "--from", "22:00", "--to", "07:00", "--tz", "Mars/Olympus"],
      {
        home,
      },
    );
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/time_zone/);
    const off = await cli(["devices", "quiet", deviceId, "--off"], { home });
    expect(off.stdout).toContain("none");
    const missing = await cli(["devices", "quiet", deviceId], { home });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("--from and --to");
  });
});
