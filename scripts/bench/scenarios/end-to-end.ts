/**
 * Scenario 3: end to end at 200/s, from a publish (gRPC, to the first server process) to a stream
 * device connected to the same process, and to one connected to another process on the same
 * database (the fan-out's news reaches it through PostgreSQL's NOTIFY).
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../../gen/herald/v1/inbox_service_pb.ts";
import { NotifyService } from "../../../gen/herald/v1/notify_service_pb.ts";
import { log, record, secs } from "../context.ts";
import { auth, password, quiesce, startPeer, url } from "../infrastructure.ts";
import { drive, summarize } from "../stats.ts";
import { judge } from "../targets.ts";

/** A stream device on `at`, filtered to `topic`, timing what arrives against `sentAt`. */
async function streamDevice(at: string, topic: string, sentAt: Map<string, number>) {
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl: at, httpVersion: "1.1" }),
  );
  const stream = await devices.signInDevice({
    method: { case: "password", value: { email: "bench@example.com", password } },
    name: `bench stream ${topic}`,
    platform: "stream",
  });
  const headers = { authorization: `Bearer ${stream.deviceCredential}` };
  await devices.setTopicFilter({ topics: [topic] }, { headers });
  const arrived: number[] = [];
  const abort = new AbortController();
  const inbox = createClient(
    InboxService,
    createConnectTransport({ baseUrl: at, httpVersion: "1.1" }),
  );
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  const done = (async () => {
    try {
      for await (const m of inbox.subscribe({}, { headers, signal: abort.signal })) {
        open(); // the first message is the keepalive that says the stream is live
        if (m.event.case !== "notification") continue;
        const t = sentAt.get(m.event.value.title);
        if (t !== undefined) arrived.push(performance.now() - t);
      }
    } catch {
      // aborted at the end
    }
  })();
  await opened;
  const stop = () => {
    abort.abort();
    return done;
  };
  return { arrived, stop };
}

/** Each stream's target for the p50: under 10 ms on the same process, at most 15 on another. */
const p50Target = {
  "the same process": { ms: 10, strict: true },
  "another process": { ms: 15, strict: false },
} as const;

/** Publishes at 200/s for the scenario's time to `topic`; answers how many and the latencies. */
async function run(where: keyof typeof p50Target, at: string, topic: string): Promise<void> {
  const sentAt = new Map<string, number>();
  const device = await streamDevice(at, topic, sentAt);
  const publisher = createClient(NotifyService, createGrpcTransport({ baseUrl: url }));
  let seq = 0;
  const publish = (timed: boolean) => async () => {
    const title = `${topic} ${seq++}`;
    if (timed) sentAt.set(title, performance.now());
    await publisher.notify({ title, topic }, { headers: auth });
  };
  // Warmed up first, as every other scenario is (the stream's process may have just started):
  // these reach the device too, untimed.
  await drive(publish(false), { seconds: secs(2), concurrency: 20, rate: 200 });
  const answered = await drive(publish(true), { seconds: secs(10), concurrency: 20, rate: 200 });
  const until = performance.now() + 5_000;
  while (device.arrived.length < sentAt.size && performance.now() < until)
    await new Promise((r) => setTimeout(r, 20));
  await device.stop();
  const s = summarize(device.arrived, sentAt.size - device.arrived.length, secs(10));
  record(
    `end to end at 200/s: publish → stream device on ${where}`,
    `received ${device.arrived.length}/${sentAt.size}, p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms; the publishes' own answers p50 ${answered.p50} ms, p99 ${answered.p99} ms`,
    s,
  );
  const { ms, strict } = p50Target[where];
  judge(
    `end to end p50 ${strict ? "<" : "≤"} ${ms} ms, stream device on ${where}`,
    `${s.p50} ms (${device.arrived.length}/${sentAt.size} received)`,
    device.arrived.length === sentAt.size && (strict ? s.p50 < ms : s.p50 <= ms),
    `the publish's own answer: p50 ${answered.p50} ms, p99 ${answered.p99} ms (its commit included); the rest is the way from the commit to the stream (NOTIFY, the hub, the stream's write)`,
  );
}

export async function endToEnd(): Promise<void> {
  log("3. end to end: publish → stream device, on the same process and on another");
  await quiesce();
  await run("the same process", url, "e2e");
  await run("another process", await startPeer(), "e2e-peer");
}
