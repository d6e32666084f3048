/**
 * `herald listen` worth leaving open: readable lines (time, priority, topic, title, the message
 * indented, the link), NDJSON with --json, a bell on request, and "connection lost, retrying" /
 * "reconnected" lines with a backoff capped at 5 s while the server is away.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationSchema } from "../../gen/herald/v1/notification_pb.ts";
import { formatNotification } from "../../src/cli/commands/listen.ts";
import {
  cliFor,
  configFile,
  devicesListening,
  herald,
  spawnCli,
  streamOpen,
  streamsOfMachine,
  titlesOf,
} from "../helpers/cli.ts";
import { sql } from "../helpers/db.ts";
import { body, type JsonBody, rpcCalls } from "../helpers/http.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { tempDir } from "../helpers/temp.ts";
import { alive } from "../helpers/tree.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { cli, loggedIn, listening: listeningIn } = cliFor(() => server);

describe("listen's lines", () => {
  it("show time, priority, topic and title, the message indented, then the link", () => {
    const n = create(NotificationSchema, {
      title: "Deploy failed",
      topic: "deploys",
      priority: "high",
      message: "api v42\nrolled back",
      clickUrl: "https://ci.example.com/run/7",
      createdAt: timestampFromDate(new Date(2026, 0, 1, 14, 2, 11)),
    });
    expect(formatNotification(n, false)).toBe(
      "14:02:11  HIGH  #deploys  Deploy failed\n          api v42\n          rolled back\n          → https://ci.example.com/run/7\n",
    );
    expect(formatNotification(n, true)).toContain("\x1b[1;31mHIGH\x1b[0m");
    expect(
      formatNotification(
        create(NotificationSchema, { ...n, priority: "normal", message: "", clickUrl: undefined }),
        false,
      ),
    ).toBe("14:02:11        #deploys  Deploy failed\n");
  });

  it("--json prints one object per line, and --bell rings before each", async () => {
    const h = await loggedIn();
    const listening = cli(["listen", "--topic", "ndjson", "--count", "2", "--json"], { home: h });
    const ringing = cli(["listen", "--topic", "ndjson", "--count", "1", "--bell"], {
      home: await loggedIn(),
    });
    await devicesListening(server, "ndjson", 2);
    const one = await notify(server, { title: "one", topic: "ndjson" });
    await notify(server, { title: "two", topic: "ndjson" });
    const out = (await listening).stdout.trim().split("\n");
    expect(out.map((l) => JSON.parse(l).title)).toEqual(["one", "two"]);
    expect((await ringing).stdout.startsWith("\x07")).toBe(true);
    // A stream is not pushed: `herald status` shows no attempts for it ("-"), not 0 of them.
    const status = await cli(["status", String(one.json.id)], { home: h });
    const streams = status.stdout.split("\n").filter((l) => / stream /.test(l));
    expect(streams, status.stdout).toHaveLength(2);
    for (const row of streams) expect(row).toMatch(/ stream +[a-z]+ +- +\d{4}-/);
  });

  it("end when this machine's device is removed elsewhere, and say how to listen again", async () => {
    const h = await loggedIn();
    // As in a terminal: listen reads keys (in raw mode) while it runs, and must give them back.
    const keys = { taken: 0, given: 0 };
    const onKey = () => {
      keys.taken++;
      return () => void keys.given++;
    };
    const listening = cli(["listen", "--topic", "removed"], { home: h, onKey });
    await streamOpen(server, "removed");
    const [device] = await sql<{ id: string }>(
      server.databaseUrl,
      "select id from device where 'removed' = any(topics) and signed_out_at is null",
    );
    const removed = await cli(["devices", "remove", device?.id as string, "--yes"], {
      home: await loggedIn(),
    });
    expect(removed.code, removed.stderr).toBe(0);
    const ended = await listening;
    expect(ended.code).toBe(3);
    expect(ended.stderr).toContain(
      "this machine's device was signed out (removed, or signed out elsewhere): `herald listen` registers it again",
    );
    // Else a terminal's `herald listen` printed this and hung, in raw mode (by hand, in tmux).
    expect(keys).toEqual({ taken: 1, given: 1 });
  });
});

describe("listen's topics", () => {
  it("without --topic hears every topic again, after a listen with one", async () => {
    const h = await loggedIn();
    const narrow = cli(["listen", "--topic", "narrow-only", "--count", "1", "--json"], {
      home: h,
    });
    await devicesListening(server, "narrow-only", 1);
    await notify(server, { title: "narrow", topic: "narrow-only" });
    expect((await narrow).code).toBe(0);
    const [device] = await sql<{ id: string }>(
      server.databaseUrl,
      "select id from device where 'narrow-only' = any(topics)",
    );
    // Before: the device kept the last --topic, and "listening for every topic" heard only it.
    const stop = AbortSignal.timeout(15_000);
    const every = cli(["listen", "--count", "1", "--json"], { home: h, signal: stop });
    const filter = async () =>
      (
        await sql<{ topics: string[] }>(
          server.databaseUrl,
          "select topics from device where id = $1",
          [device?.id],
        )
      )[0]?.topics;
    await waitFor(async () => (await filter())?.length === 0, 10_000);
    expect(await filter()).toEqual([]);
    await notify(server, { title: "anything else", topic: "elsewhere" });
    const heard = await every;
    expect(heard.stderr).toContain("listening for every topic");
    expect(JSON.parse(heard.stdout).title).toBe("anything else");
    // Signed out: a device of every topic would receive the later tests' notifications too.
    expect((await cli(["logout"], { home: h })).code).toBe(0);
  });
});

describe("two listens on one machine", () => {
  it("each hears its own topics, whichever started first", async () => {
    const h = await loggedIn();
    const running: { stop: AbortController; done: Promise<unknown> }[] = [];
    const listening = (argv: string[]) => {
      const listen = listeningIn(h, argv, 60_000);
      running.push(listen);
      return listen;
    };
    const device = () => JSON.parse(readFileSync(configFile(h), "utf8")).devices?.[0]?.id as string;
    const streams = async (n: number) => expect(await streamsOfMachine(server, h, n)).toBe(n);
    const filter = async () =>
      (
        await sql<{ topics: string[] }>(
          server.databaseUrl,
          "select topics from device where id = $1",
          [device()],
        )
      )[0]?.topics;
    try {
      // A plain listen first; then one of a topic.
      const every = listening([]);
      await streams(1);
      const mine = listening(["--topic", "default/only-mine"]);
      await streams(2);
      // Before: the --topic listen narrowed the shared device's filter to its topic, so the
      // plain listen no longer heard the others.
      expect(await filter()).toEqual([]);
      await notify(server, { title: "someone else's", topic: "not-mine" });
      await notify(server, { title: "mine", topic: "only-mine" });
      await waitFor(
        () => titlesOf(every.seen.out).length === 2 && titlesOf(mine.seen.out).length === 1,
      );
      expect(titlesOf(every.seen.out).sort()).toEqual(["mine", "someone else's"]);
      // Another plain listen while both run: the --topic one still shows only its topics.
      const later = listening(["--count", "1"]);
      await streams(3);
      await notify(server, { title: "after", topic: "not-mine" });
      expect(titlesOf((await later.done).stdout)).toEqual(["after"]);
      await waitFor(() => titlesOf(every.seen.out).length === 3);
      expect(titlesOf(every.seen.out)).toContain("after");
      // The plain one ends: the device's filter is the --topic one's again, and stays so when
      // it ends too (the machine catches up on that next time).
      expect(await filter()).toEqual([]);
      every.stop.abort();
      await every.done;
      expect(await filter()).toEqual(["default/only-mine"]);
      mine.stop.abort();
      await mine.done;
      expect(await filter()).toEqual(["default/only-mine"]);
      expect(titlesOf(mine.seen.out)).toEqual(["mine"]);
    } finally {
      for (const r of running) r.stop.abort();
      await Promise.all(running.map((r) => r.done));
      // Signed out: a device of every topic would receive the later tests' notifications too.
      expect((await cli(["logout"], { home: h })).code).toBe(0);
    }
  }, 60_000);
});

describe("listen --topic '*'", () => {
  it("hears every topic: the device's filter is stored empty", async () => {
    const h = await loggedIn();
    let said = "";
    const star = cli(["listen", "--topic", "*", "--count", "1", "--json"], {
      home: h,
      signal: AbortSignal.timeout(15_000),
      onStderr: (s) => {
        said += s;
      },
    });
    // Said once its filter is set.
    await waitFor(() => said.includes("listening for topic *"), 10_000);
    const id = JSON.parse(readFileSync(configFile(h), "utf8")).devices[0].id as string;
    const [row] = await sql<{ topics: string[] }>(
      server.databaseUrl,
      "select topics from device where id = $1",
      [id],
    );
    // Before: stored as ['*'], which the fan-out matched to no topic: nothing new was heard.
    expect(row?.topics).toEqual([]);
    await notify(server, { title: "any topic at all", topic: "star-topic" });
    const heard = await star;
    expect(JSON.parse(heard.stdout).title).toBe("any topic at all");
    expect((await cli(["logout"], { home: h })).code).toBe(0);
  });
});

describe("acknowledging from the terminal", () => {
  it("listen shows what needs acknowledgement; the a key acknowledges it; herald ack does too", async () => {
    const h = await loggedIn();
    let press: ((key: string) => void) | undefined;
    let released = false;
    const stop = new AbortController();
    let shown = "";
    const listening = cli(["listen", "--topic", "pager"], {
      home: h,
      signal: stop.signal,
      onStdout: (s) => {
        shown += s;
      },
      onKey: (handler) => {
        press = handler;
        return () => {
          released = true;
        };
      },
    });
    await devicesListening(server, "pager");
    const n = await notify(server, { title: "db down", topic: "pager", require_ack: true });
    const get = async (id: string) =>
      body(
        await fetch(`${server.url}/v1/notifications/${id}`, {
          headers: { authorization: `Bearer ${server.apiKey}` },
        }),
      );
    // listen has it, and acknowledged its receipt.
    await waitFor(async () => (await get(n.json.id)).deliveries.delivered === 1);
    press?.("x"); // other keys do nothing
    press?.("a");
    let acked: JsonBody = {};
    await waitFor(async () => {
      acked = await get(n.json.id);
      return Boolean(acked.acknowledged_at);
    });
    expect(acked.acknowledged_by_device_id).toMatch(/^[0-9a-f-]{36}$/);
    // The clear reaches the stream, and listen says so.
    await waitFor(() => shown.includes(`✓ acknowledged here: ${n.json.id}`));
    stop.abort();
    const out = (await listening).stdout;
    expect(out).toContain("db down");
    expect(out).toContain("needs acknowledgement: press a");
    expect(out).toContain(`✓ acknowledged here: ${n.json.id}`);
    expect(released).toBe(true);

    // `herald ack ID`, as this machine, for scripts.
    const m = await notify(server, { title: "disk full", topic: "pager", require_ack: true });
    await waitFor(async () => (await get(m.json.id)).deliveries.total === 1); // fanned out to it
    const ack = await cli(["ack", m.json.id], { home: h });
    expect(ack.code, ack.stderr).toBe(0);
    expect(ack.stdout).toContain(`acknowledged ${m.json.id}`);
  });
});

describe("listen coming back to a backlog, its receipts at the device's rate limit", () => {
  // Each credential: a bucket of 10 requests, refilled at 5 a second.
  let tight: TestServer;
  beforeAll(async () => {
    tight = await startServer({ rateLimitBurst: 10, rateLimitPerSecond: 5 });
  });
  afterAll(async () => tight.close());
  const t = cliFor(() => tight);

  /** Publishes, waiting out the API key's own rate limit. */
  const publish = async (title: string) => {
    for (;;) {
      const r = await notify(tight, { title, topic: "backlog" });
      if (r.status === 202) return;
      expect(r.status).toBe(429);
      await new Promise((res) => setTimeout(res, Number(r.headers.get("retry-after") ?? 1) * 1000));
    }
  };

  it("shows every one without dropping its stream for a refused receipt, and records each receipt", async () => {
    const h = await t.loggedIn();
    const first = t.cli(["listen", "--topic", "backlog", "--count", "1"], { home: h });
    await devicesListening(tight, "backlog");
    await publish("before the break");
    expect((await first).code).toBe(0);
    const titles = Array.from({ length: 24 }, (_, i) => `missed ${i + 1}`);
    for (const title of titles) await publish(title);
    // Back: 24 waiting, and 24 receipts against a bucket of 10 refilled at 5 a second.
    const back = await t.cli(["listen", "--topic", "backlog", "--count", "24", "--json"], {
      home: h,
    });
    expect(back.code, back.stderr).toBe(0);
    expect(
      back.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).title),
    ).toEqual(titles);
    expect(back.stderr).not.toContain("connection lost");
    const [row] = await sql<{ sent: number; delivered: number }>(
      tight.databaseUrl,
      `select count(*) filter (where state = 'sent')::int as sent,
              count(*) filter (where state = 'delivered')::int as delivered
         from delivery where platform = 'stream'`,
    );
    expect(row).toEqual({ sent: 0, delivered: 25 });
    // In a few calls of many receipts each, not one call a notification.
    const calls = await rpcCalls(tight.url, "InboxService");
    expect(calls.AckNotification ?? 0).toBe(0);
    expect(calls.ConfirmReceipts).toBeGreaterThanOrEqual(2);
    expect(calls.ConfirmReceipts).toBeLessThanOrEqual(8);
  }, 60_000);
});

describe("listen while the server is away", () => {
  it("says so, retries with a backoff capped at 5 s, and says when it is back", async () => {
    // A door in front of the server that can slam every connection, as a restart does.
    const open = new Set<Socket>();
    let refusing = false;
    const door = createServer((client) => {
      if (refusing) return client.destroy();
      const upstream = createConnection(server.port, "127.0.0.1");
      client.pipe(upstream).pipe(client);
      for (const s of [client, upstream]) {
        open.add(s);
        s.on("close", () => open.delete(s));
        s.on("error", () => {});
      }
    });
    await new Promise<void>((r) => door.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(door.address() as { port: number }).port}`;
    const h = await loggedIn();
    const abort = new AbortController();
    let out = "";
    let err = "";
    const listening = cli(["listen", "--url", url, "--topic", "away"], {
      home: h,
      signal: abort.signal,
      onStdout: (s) => {
        out += s;
      },
      onStderr: (s) => {
        err += s;
      },
    });
    await streamOpen(server, "away");
    refusing = true;
    for (const s of open) s.destroy();
    // Two attempts refused: 0.5 s and then 1 s of backoff.
    await waitFor(() => /retrying in 1 s\n/.test(err), 5_000);
    refusing = false;
    await waitFor(() => err.includes("reconnected\n"), 5_000);
    await notify(server, { title: "back again", topic: "away" });
    await waitFor(() => out.includes("#away  back again"), 5_000);
    abort.abort();
    const result = await listening;
    door.close();
    expect(result.stderr).toMatch(/connection lost \(.*\), retrying in 0\.5 s\n/);
    expect(result.stderr).toMatch(/retrying in 1 s\n/);
    expect(result.stderr).toContain("reconnected\n");
    expect(result.stdout).toContain("#away  back again");
    const waits = [...result.stderr.matchAll(/retrying in ([\d.]+) s/g)].map((m) => Number(m[1]));
    expect(Math.max(...waits)).toBeLessThanOrEqual(5);
  }, 20_000);
});

describe("listen --exec, stopped while its command runs", () => {
  // The command, and what it started, stop with listen when a signal is sent to listen alone
  // (a kill, a service manager): at once, or, ignoring SIGTERM, within 3 s by SIGKILL.
  it.each([
    ["a command that stops when asked", "SIGTERM", ""],
    ["a command that ignores SIGTERM", "SIGTERM", "trap '' TERM; "],
    ["a command, when the terminal closes", "SIGHUP", ""],
  ] as const)(
    "stops %s (%s to listen)",
    async (_what, signal, prelude) => {
      const h = await loggedIn();
      const topic = `exec-stop-${signal}-${prelude ? "trap" : "plain"}`.toLowerCase();
      const dir = tempDir("herald-exec-");
      const pids = join(dir, "pids");
      const child = spawnCli(
        ["listen", "--topic", topic, "--exec", `${prelude}sleep 300 & echo $$ $! > ${pids}; wait`],
        h,
        server.url,
      );
      const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      await devicesListening(server, topic);
      await notify(server, { title: "run me", topic });
      await waitFor(() => existsSync(pids) && readFileSync(pids, "utf8").endsWith("\n"), 10_000);
      const started = readFileSync(pids, "utf8").trim().split(" ").map(Number);
      expect(started.every(alive)).toBe(true);
      child.kill(signal);
      expect(await exited).toBe(0); // listen ends as after Ctrl-C (docs/cli.md, exit codes)
      await waitFor(() => !started.some(alive), 5_000);
      expect(started.filter(alive)).toEqual([]);
    },
    30_000,
  );
});

describe("listen into a pipe", () => {
  const delivered = async (topic: string) =>
    (
      await sql<{ n: number }>(
        server.databaseUrl,
        `select count(*)::int as n from delivery d join notification n on n.id = d.notification_id
          where n.topic = $1 and d.state = 'delivered'`,
        [topic],
      )
    )[0]?.n ?? 0;

  it("stops quietly when what reads it goes away (| head)", async () => {
    const h = await loggedIn();
    const child = spawnCli(["listen", "--topic", "pipe-closed", "--json"], h, server.url);
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.once("close", (code) => r(code)));
    await devicesListening(server, "pipe-closed");
    await notify(server, { title: "the one read", topic: "pipe-closed" });
    const first = await new Promise<string>((r) => child.stdout.once("data", (d) => r(String(d))));
    expect(first).toContain("the one read");
    // The reader goes, as `head -1` does once it has its line.
    child.stdout.destroy();
    await notify(server, { title: "into the closed pipe", topic: "pipe-closed" });
    // Before: an unhandled EPIPE, its stack on stderr, exit code 1.
    expect(await exited).toBe(0);
    expect(err).not.toMatch(/EPIPE|Error|at /);
    // The one read was confirmed; the one written into the closed pipe was not: it comes again.
    const states = await sql<{ title: string; state: string }>(
      server.databaseUrl,
      `select n.title, d.state from delivery d join notification n on n.id = d.notification_id
        where n.topic = 'pipe-closed' order by n.id`,
    );
    expect(states.map((r) => [r.title, r.state === "delivered"])).toEqual([
      ["the one read", true],
      ["into the closed pipe", false],
    ]);
  });

  it("takes no more while what reads it does not, and confirms only what it handed on", async () => {
    const h = await loggedIn();
    const child = spawnCli(["listen", "--topic", "pipe-slow", "--json"], h, server.url);
    child.stdout.pause();
    await devicesListening(server, "pipe-slow");
    // 250 notifications of 4,000 bytes (2,000 two-byte characters, the most a message holds):
    // 1 MB, more than the socket pair under the pipe and Node's buffer hold.
    const message = "é".repeat(2000);
    for (let i = 0; i < 250; i++) {
      const r = await notify(server, { title: `slow ${i}`, topic: "pipe-slow", message });
      expect(r.status).toBe(202);
    }
    // Until the count stops moving: it stalls once the pipe is full.
    let last = -1;
    let now = await delivered("pipe-slow");
    while (now !== last) {
      last = now;
      await waitFor(async () => (await delivered("pipe-slow")) !== last, 1_500);
      now = await delivered("pipe-slow");
    }
    // Before: all 250 confirmed delivered, held in the CLI's memory, unread.
    expect(now).toBeLessThan(250);
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stdout.resume();
    await waitFor(async () => (await delivered("pipe-slow")) === 250, 30_000);
    expect(await delivered("pipe-slow")).toBe(250);
    expect(out.trim().split("\n")).toHaveLength(250);
    child.kill("SIGINT");
    await new Promise((r) => child.once("close", r));
  }, 60_000);

  it("into a full disk: says so once, is not confirmed, and exits 1; so does notify", async () => {
    const h = await loggedIn();
    const full = openSync("/dev/full", "w");
    const run = (args: string[]) =>
      spawn(process.execPath, [herald, ...args], {
        env: {
          ...process.env,
          HOME: h,
          XDG_CONFIG_HOME: join(h, ".config"),
          HERALD_URL: server.url,
        },
        stdio: ["ignore", full, "pipe"],
      });
    const ended = (child: ReturnType<typeof run>) => {
      let err = "";
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      return new Promise<{ code: number | null; err: string }>((r) =>
        child.once("close", (code) => r({ code, err })),
      );
    };
    const listening = ended(run(["listen", "--topic", "disk-full", "--json"]));
    await devicesListening(server, "disk-full");
    await notify(server, { title: "onto a full disk", topic: "disk-full" });
    const listened = await listening;
    // Before: exit 0, as if what it printed had been written.
    expect(listened.code).toBe(1);
    expect(listened.err.match(/cannot write its output: ENOSPC/g)).toHaveLength(1);
    const [row] = await sql<{ state: string }>(
      server.databaseUrl,
      `select d.state from delivery d join notification n on n.id = d.notification_id
        where n.topic = 'disk-full'`,
    );
    expect(row?.state).not.toBe("delivered");
    // A one-shot command too: the notification is published, but its id was never written.
    const notified = await ended(run(["notify", "published, unsaid", "--topic", "disk-full-2"]));
    expect(notified.code).toBe(1);
    expect(notified.err).toMatch(/cannot write its output: ENOSPC/);
    closeSync(full);
  });

  it("keeps its exit code when stderr's reader has gone", async () => {
    const child = spawnCli(["history", "--no-such-flag"], await loggedIn(), server.url);
    child.stderr.destroy();
    const code = await new Promise<number | null>((r) => child.once("close", (c) => r(c)));
    // Before: an unhandled EPIPE on stderr, exit code 1.
    expect(code).toBe(2);
  });
});
