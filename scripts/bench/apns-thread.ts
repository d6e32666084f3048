/**
 * A fake APNs in its own thread, for the sender-throughput scenario: the provider's work
 * (TLS, HTTP/2, checking every provider token) then does not share the sender's event loop,
 * as it would not with Apple's servers. Posts its connection details, then the number of
 * pushes it received whenever asked.
 */
import { parentPort } from "node:worker_threads";
import { startFakeApns } from "../../test/fakes/apns-server.ts";

const port = parentPort;
if (!port) throw new Error("run as a worker thread");
const apns = await startFakeApns();
port.postMessage({
  origin: apns.origin,
  ca: apns.ca,
  teamId: apns.teamId,
  keyId: apns.keyId,
  signingKey: apns.signingKey,
});
port.on("message", async (m: "count" | "close") => {
  if (m === "count") port.postMessage(apns.received.length);
  else {
    await apns.close();
    port.close();
  }
});
