/** Scenario 4, second part: the APNs sender's throughput, to the fake in a thread of its own. */
import { Worker } from "node:worker_threads";
import { createApnsSender } from "../../../src/delivery/senders/apns.ts";
import type { Sender } from "../../../src/delivery/senders/sender.ts";
import { uuidv7 } from "../../../src/domain/ids.ts";
import { record, smoke } from "../context.ts";
import { judge } from "../targets.ts";

/** How busy the sender's thread was: where an APNs run's time went (it, or elsewhere). */
const busyLine = (busy: number) =>
  `the sender's thread was busy ${Math.round(busy * 100)} % of the time`;

export async function apnsThroughput(): Promise<void> {
  const thread = new Worker(new URL("../apns-thread.ts", import.meta.url));
  const remote = await new Promise<{
    origin: string;
    ca: string;
    teamId: string;
    keyId: string;
    signingKey: string;
  }>((r) => thread.once("message", r));
  const sender = createApnsSender({
    teamId: remote.teamId,
    keyId: remote.keyId,
    signingKey: remote.signingKey,
    bundleId: "dev.herald.bench",
    sandbox: false,
    endpoint: { origin: remote.origin, ca: remote.ca },
  });
  // Warmed up first, as every other scenario is: the first pushes pay the connection's TLS and
  // HTTP/2 set-up and the sender's code being compiled (measured cold, the first 5,000 pushes
  // went at 4,853/s and the next 5,000 at 7,447/s on one machine), which a sender that runs for
  // hours pays once.
  const warmUp = smoke ? 20 : 2_000;
  const pushes = smoke ? 100 : 10_000;
  await pushMany(sender, warmUp);
  const tp = performance.now();
  const loop = performance.eventLoopUtilization();
  await pushMany(sender, pushes);
  const pushRate = Math.round(pushes / ((performance.now() - tp) / 1000));
  // Where the time goes: how busy the sender's thread was (1: it is the limit).
  const busy = performance.eventLoopUtilization(loop).utilization;
  await sender.close();
  thread.postMessage("count");
  const seen = await new Promise<number>((r) => thread.once("message", r));
  thread.postMessage("close");
  await new Promise((r) => thread.once("exit", r));
  if (seen !== warmUp + pushes) {
    throw new Error(`the fake APNs saw ${seen} of ${warmUp + pushes} pushes`);
  }
  record(
    "APNs sender throughput (HTTP/2 to the fake in its own thread, 100 concurrent, after a warm-up)",
    `${pushRate} pushes/s; ${busyLine(busy)}`,
    { pushesPerSecond: pushRate, senderThreadBusy: busy },
  );
  const why = `${busyLine(busy)} (near 100 %: its CPU is the limit; lower: the fake or the machine)`;
  judge("APNs sender ≥ 5,000 pushes/s", `${pushRate}/s`, pushRate >= 5_000, why);
}

/** Sends `pushes` pushes, 100 at a time, each to a token of its own; any refusal fails the run. */
async function pushMany(sender: Sender, pushes: number) {
  let n = 0;
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      while (n < pushes) {
        const i = n++;
        const result = await sender.send(
          {
            notificationId: uuidv7(),
            topic: "t",
            title: "throughput",
            message: "m",
            priority: "high",
            click_url: null,
            replace_key: null,
            expiresAt: new Date(Date.now() + 60_000),
            hasTtl: true,
          },
          i.toString(16).padStart(64, "f"),
        );
        if (result.kind !== "ok") throw new Error(`APNs push failed: ${JSON.stringify(result)}`);
      }
    }),
  );
}
