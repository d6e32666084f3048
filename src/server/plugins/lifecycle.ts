/**
 * What runs beside the requests, started when the app is ready and stopped when it closes:
 * the stream hub, and (where this process runs one) the delivery worker and retention. On
 * close, in-flight calls get a grace period, then whatever still runs (streams) is cut.
 */
import type { FastifyInstance } from "fastify";
import type { CredentialVerifier } from "../../db/index.ts";
import type { RetentionTimer } from "../../delivery/retention-timer.ts";
import type { Sender } from "../../delivery/senders/sender.ts";
import type { StreamHub } from "../../delivery/streams/hub.ts";
import type { WebhookWorker } from "../../delivery/webhook-worker.ts";
import type { DeliveryWorker } from "../../delivery/worker.ts";

export interface Background {
  hub: StreamHub;
  /** Undefined when this process runs no worker (HERALD_WORKER=0). */
  worker: DeliveryWorker | undefined;
  /** The webhook sender, where a worker runs. */
  webhooks: WebhookWorker | undefined;
  retention: RetentionTimer | undefined;
  senders: readonly Sender[];
  credentials: CredentialVerifier;
  /** Aborted `graceMs` after close begins: cuts the calls still running. */
  shutdown: AbortController;
  graceMs: number;
}

export function registerLifecycle(app: FastifyInstance, bg: Background): void {
  app.addHook("preClose", async () => {
    // Streams would hold the close for the whole grace period: they end now, telling their
    // clients to reconnect. Unary calls get the grace period to finish.
    bg.hub.endStreams();
    setTimeout(() => bg.shutdown.abort(), bg.graceMs).unref();
    // A kept-alive connection whose last call ends during the drain (a stream just ended, say)
    // goes idle after the close began: closed then, rather than held until its keep-alive ends.
    const idle = setInterval(() => app.server.closeIdleConnections(), 50).unref();
    app.server.once("close", () => clearInterval(idle));
  });
  app.addHook("onReady", async () => {
    await bg.hub.start();
    bg.worker?.start();
    bg.webhooks?.start();
    bg.retention?.start();
  });
  app.addHook("onClose", async () => {
    await bg.retention?.stop();
    await bg.worker?.stop();
    await bg.webhooks?.stop();
    await bg.hub.close();
    await Promise.all(bg.senders.map((s) => s.close()));
    await bg.credentials.drain();
  });
}
