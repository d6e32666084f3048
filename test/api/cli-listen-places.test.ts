/**
 * Each set of topics `herald listen` hears on a machine keeps its own place in the machine's
 * stream, and comes back to what arrived for it while it was stopped, though another listen of
 * the machine showed (and confirmed, for the device) the same notifications meanwhile.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor, configFile, streamsOfMachine, titlesOf } from "../helpers/cli.ts";
import { sql } from "../helpers/db.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { cli, loggedIn, listening: listeningIn } = cliFor(() => server);

describe("a --topic listen started again", () => {
  it("shows what came for its topics while it was stopped, though a plain listen showed it", async () => {
    const h = await loggedIn();
    const device = () => JSON.parse(readFileSync(configFile(h), "utf8")).devices?.[0]?.id as string;
    const count = async (query: string) =>
      (await sql<{ n: number }>(server.databaseUrl, query, [device() ?? ""]))[0]?.n;
    const streams = (n: number) => streamsOfMachine(server, h, n);
    const listening = (argv: string[], ms = 30_000) => listeningIn(h, argv, ms);
    let every: ReturnType<typeof listening> | undefined;
    try {
      // The deploys listen hears its first deploy, and ends.
      const hook = listening(["--topic", "deploys", "--count", "1"]);
      await streams(1);
      await notify(server, { title: "first deploy", topic: "deploys" });
      expect(titlesOf((await hook.done).stdout)).toEqual(["first deploy"]);
      // A plain listen of the machine shows what comes next, and confirms it.
      every = listening([]);
      await streams(1);
      await notify(server, { title: "second deploy", topic: "deploys" });
      await notify(server, { title: "a build", topic: "ci" });
      await waitFor(() => titlesOf(every?.seen.out ?? "").length === 2, 15_000);
      expect(titlesOf(every.seen.out)).toEqual(["second deploy", "a build"]);
      const confirmed =
        "select count(*)::int as n from delivery where device_id::text = $1 and state = 'delivered'";
      await waitFor(async () => (await count(confirmed)) === 3, 15_000);
      expect(await count(confirmed)).toBe(3);
      // The deploys listen again: before, it started from the machine's one place, which the
      // plain listen had moved past the second deploy, and heard nothing of it.
      const again = listening(["--topic", "deploys", "--count", "1"], 15_000);
      expect(titlesOf((await again.done).stdout)).toEqual(["second deploy"]);
    } finally {
      every?.stop.abort();
      await every?.done;
      // Signed out: a device of every topic would receive the later tests' notifications too.
      expect((await cli(["logout"], { home: h })).code).toBe(0);
    }
  }, 60_000);
});
