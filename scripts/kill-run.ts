/**
 * `npm run soak:kill`: the supervisor under fire. `npm start` with 3 serving processes on a fresh
 * data directory, two stream devices listening (reconnecting as `herald listen` does), publishes
 * at 300/s over REST with an Idempotency-Key each (a failed call is retried with the same key,
 * as clients do), and a random serving process SIGKILLed every 1–2 s, KILLS times. Then it
 * checks: the server still serves, every acknowledged publish is stored once and nothing else is
 * stored, and each device received every one of them. Exits 1 if any of that fails.
 *
 *   node scripts/kill-run.ts [KILLS=60]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { DeviceService } from "../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../gen/herald/v1/inbox_service_pb.ts";
import { freePort } from "../src/db/embedded/server.ts";
import { onInterrupt } from "../src/ops/interrupt.ts";

const root = resolve(import.meta.dirname, "..");
const kills = Number(process.argv[2] ?? 60);
const dir = mkdtempSync(join(tmpdir(), "herald-kill-run-"));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const password = "kill run password";
const log = (s: string) => process.stderr.write(`${s}\n`);

const supervisor = spawn(process.execPath, [join(root, "scripts/run.mjs"), "main"], {
  env: {
    ...process.env,
    DATABASE_URL: "",
    HERALD_DATA_DIR: dir,
    HERALD_PORT: String(port),
    HERALD_PROCESSES: "3",
    HERALD_OWNER_PASSWORD: password,
    HERALD_LOG_FORMAT: "json",
    HERALD_RATE_LIMIT_BURST: "100000",
    HERALD_RATE_LIMIT_PER_SECOND: "100000",
    HERALD_ACCOUNT_RATE_BURST: "100000",
    HERALD_ACCOUNT_RATE_PER_SECOND: "100000",
    HERALD_MONTHLY_QUOTA: "10000000",
  },
  stdio: ["ignore", "pipe", "inherit"],
});
// Stopped from outside (any ending signal, to this script alone or to its terminal's group): the
// supervisor stops what it started, PostgreSQL last, then its data directory goes.
onInterrupt(async () => {
  if (supervisor.exitCode === null && supervisor.signalCode === null) {
    const exited = new Promise((r) => supervisor.once("exit", r));
    supervisor.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});
let out = "";
supervisor.stdout?.on("data", (d: Buffer) => {
  out += d.toString();
});
while (!/^HERALD_API_KEY=/m.test(out)) await new Promise((r) => setTimeout(r, 100));
const key = /^HERALD_API_KEY=(hk_\w+)$/m.exec(out)?.[1] as string;
log(`started on ${url}`);

const serving = () =>
  execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(supervisor.pid)], { encoding: "utf8" })
    .split("\n")
    .filter((l) => /dist\/server[-\d]*\/src\/main\.js/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));

/** A stream device that keeps listening through its server's deaths, as `herald listen` does. */
async function device(name: string) {
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
  );
  const { deviceCredential } = await devices.signInDevice({
    method: { case: "password", value: { email: "owner@localhost", password } },
    name,
    platform: "stream",
  });
  const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: url }));
  // Acknowledgements on a connection of their own, as `herald listen`'s (HTTP/1.1) are: on the
  // stream's HTTP/2 connection, a response waits behind the stream's unread data (one
  // flow-control window per connection), and an awaited ack then stalls the stream it acks.
  const acks = createClient(InboxService, createGrpcTransport({ baseUrl: url }));
  const auth = { headers: { authorization: `Bearer ${deviceCredential}` } };
  const received = new Set<string>();
  /** Why the stream ended, and how often (a deadline, a process killed, a refusal). */
  const errors = new Map<string, number>();
  /** How long each acknowledgement took (ms). */
  const ackMs: number[] = [];
  let stop = false;
  let cursor = "";
  const receipts = new Set<Promise<void>>();
  const ended = new AbortController();
  const loop = (async () => {
    while (!stop) {
      try {
        for await (const msg of inbox.subscribe(
          { since: cursor },
          { ...auth, signal: ended.signal },
        )) {
          if (msg.event.case !== "notification") continue;
          received.add(msg.event.value.id);
          cursor = msg.event.value.id;
          // Receipts in the background, at most 32 at once: a device catching up reads at the
          // stream's pace, not at one round trip per message (docs/api.md, Devices and the inbox).
          while (receipts.size >= 32) await Promise.race(receipts);
          const t0 = performance.now();
          const receipt = acks
            .ackNotification({ id: cursor }, { ...auth, timeoutMs: 5_000 })
            .catch(() => {})
            .then(() => {
              ackMs.push(performance.now() - t0);
              receipts.delete(receipt);
            });
          receipts.add(receipt);
          if (stop) break;
        }
      } catch (err) {
        const why = (err as { rawMessage?: string }).rawMessage ?? String(err);
        errors.set(why, (errors.get(why) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  const end = () => {
    stop = true;
    ended.abort();
    return loop;
  };
  return { received, errors, ackMs, end };
}

const listeners = [await device("one"), await device("two")];
const acknowledged = new Map<string, string>(); // idempotency key → notification id
let sent = 0;
let failedForGood = 0;
async function publish(n: number) {
  const idem = `kill-run-${n}`;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const res = await fetch(`${url}/v1/notify`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "idempotency-key": idem },
        body: JSON.stringify({ title: `kill run ${n}` }),
        signal: AbortSignal.timeout(5_000),
      });
      if (res.status === 202 || res.status === 200) {
        acknowledged.set(idem, ((await res.json()) as { id: string }).id);
        return;
      }
    } catch {
      // a connection to a process that died: retried with the same key
    }
    await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
  }
  failedForGood++;
}

const inFlight = new Set<Promise<void>>();
let publishing = true;
const publisher = (async () => {
  const start = performance.now();
  while (publishing) {
    const p = publish(sent++).finally(() => inFlight.delete(p));
    inFlight.add(p);
    const next = start + (sent * 1000) / 300;
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
})();

for (let k = 1; k <= kills; k++) {
  await new Promise((r) => setTimeout(r, 1_000 + Math.random() * 1_000));
  const pids = serving();
  const victim = pids[Math.floor(Math.random() * pids.length)];
  if (victim) process.kill(victim, "SIGKILL");
  if (k % 10 === 0) log(`${k} kills, ${sent} publishes, ${serving().length} serving`);
}
publishing = false;
await publisher;
log(`kills done; waiting for ${inFlight.size} publishes in flight`);
await Promise.all(inFlight);
log(`${acknowledged.size} acknowledged; waiting for the devices`);
// Let the processes come back and the devices catch up.
const deadline = Date.now() + 60_000;
const ids = new Set(acknowledged.values());
while (Date.now() < deadline && listeners.some((l) => [...ids].some((id) => !l.received.has(id)))) {
  await new Promise((r) => setTimeout(r, 500));
}
log(`devices: ${listeners.map((l) => l.received.size).join(", ")} received`);
// The server's own log (JSON lines), for a run to look into: KILL_RUN_LOG=FILE.
if (process.env.KILL_RUN_LOG) writeFileSync(process.env.KILL_RUN_LOG, out);
for (const l of listeners) {
  const ms = [...l.ackMs].sort((a, b) => a - b);
  const p = (q: number) => Math.round(ms[Math.floor(q * (ms.length - 1))] ?? 0);
  log(`  streams ended by: ${JSON.stringify(Object.fromEntries(l.errors))}`);
  log(`  acknowledgements: ${ms.length}, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms`);
}
const still = await fetch(`${url}/v1/notify`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}` },
  body: JSON.stringify({ title: "after the kill run" }),
});
const db = new pg.Client({
  connectionString: `postgres://herald:herald@127.0.0.1:${execFileSync("sed", ["-n", "4p", join(dir, "pg", "postmaster.pid")], { encoding: "utf8" }).trim()}/herald`,
});
await db.connect();
const stored = await db.query<{ title: string; n: string }>(
  "select title, count(*) as n from notification where title like 'kill run %' group by title",
);
await db.end();
const twice = stored.rows.filter((r) => Number(r.n) > 1).length;
const storedIds = stored.rows.length;
const missing = listeners.map((l) => [...ids].filter((id) => !l.received.has(id)).length);
for (const l of listeners) await l.end();
supervisor.kill("SIGTERM");
await new Promise((r) => supervisor.once("exit", r));
rmSync(dir, { recursive: true, force: true });

const ok =
  still.status === 202 && twice === 0 && storedIds === ids.size && missing.every((m) => m === 0);
process.stdout.write(
  `${kills} kills; ${sent} publishes sent, ${ids.size} acknowledged, ${failedForGood} never acknowledged; ` +
    `${storedIds} stored, ${twice} stored twice; missing on the devices: ${missing.join(", ")}; ` +
    `serving after: ${still.status === 202 ? "yes" : `no (${still.status})`}: ${ok ? "PASS" : "FAIL"}\n`,
);
process.exit(ok ? 0 : 1);
