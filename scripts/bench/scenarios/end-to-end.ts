/** Scenario 3: end to end, from a publish to a stream device, at 200/s. */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../../gen/herald/v1/inbox_service_pb.ts";
import { NotifyService } from "../../../gen/herald/v1/notify_service_pb.ts";
import { log, record, secs } from "../context.ts";
import { auth, password, quiesce, url } from "../infrastructure.ts";
import { drive, summarize } from "../stats.ts";

export async function endToEnd(): Promise<void> {
  // --- 3. end to end: publish → stream device ---------------------------------------------
  log("3. end to end: publish → stream device");
  await quiesce();
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
  );
  const stream = await devices.signInDevice({
    method: { case: "password", value: { email: "bench@example.com", password } },
    name: "bench stream",
    platform: "stream",
  });
  const deviceAuth = { authorization: `Bearer ${stream.deviceCredential}` };
  await devices.setTopicFilter({ topics: ["e2e"] }, { headers: deviceAuth });
  const sentAt = new Map<string, number>();
  const e2e: number[] = [];
  const abort = new AbortController();
  const inbox = createClient(
    InboxService,
    createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
  );
  const listening = (async () => {
    try {
      for await (const m of inbox.subscribe({}, { headers: deviceAuth, signal: abort.signal })) {
        if (m.event.case !== "notification") continue;
        const t = sentAt.get(m.event.value.title);
        if (t !== undefined) e2e.push(performance.now() - t);
      }
    } catch {
      // aborted at the end
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  const publisher = createClient(NotifyService, createGrpcTransport({ baseUrl: url }));
  let seq = 0;
  await drive(
    async () => {
      const title = `e2e ${seq++}`;
      sentAt.set(title, performance.now());
      await publisher.notify({ title, topic: "e2e" }, { headers: auth });
    },
    { seconds: secs(10), concurrency: 20, rate: 200 },
  );
  await new Promise((r) => setTimeout(r, 1500));
  abort.abort();
  await listening;
  const e2eSummary = summarize(e2e, sentAt.size - e2e.length, secs(10));
  record(
    "end to end at 200/s: publish → stream device",
    `received ${e2e.length}/${sentAt.size}, p50 ${e2eSummary.p50} ms, p90 ${e2eSummary.p90} ms, p99 ${e2eSummary.p99} ms`,
    e2eSummary,
  );
}
