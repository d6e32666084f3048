/**
 * Clearing an acknowledged (or answered) notification on the other push devices: a background
 * push saying `{"type":"clear","id":…}`. On Web Push it has the notification's Topic (one still
 * queued at the push service is replaced rather than shown) and the service worker closes it;
 * on APNs it is a background push (`content-available`) and on FCM a data message, on which the
 * app removes the shown notification. Best effort: a clear that fails is logged, not retried
 * (docs/delivery.md, "Acknowledge and escalate").
 */
import type { DueClear } from "../db/queue/acknowledgements.ts";
import type { Log } from "../domain/log.ts";
import type { PushTokenKeyRing } from "../domain/push-token-crypto.ts";
import type { Sender } from "./senders/sender.ts";

export async function sendClears(
  due: DueClear[],
  senders: ReadonlyMap<string, Sender>,
  tokenKeys: PushTokenKeyRing,
  log: Log,
): Promise<void> {
  await Promise.all(
    due.map(async (c) => {
      const sender = senders.get(c.platform);
      if (!sender || sender.unconfigured || !c.token_key_id || !c.token_box) return;
      const token = tokenKeys.open({ keyId: c.token_key_id, box: c.token_box }, c.device_id);
      const result = await sender
        .send(
          {
            kind: "clear",
            notificationId: c.notification_id,
            topic: "",
            title: "",
            message: "",
            priority: "low",
            clickUrl: null,
            expiresAt: new Date(Date.now() + 3600_000),
            hasTtl: true,
          },
          token,
        )
        .catch((err: unknown) => ({ kind: "error", err }));
      if (result.kind !== "ok") {
        log.warn(
          { result, device_id: c.device_id },
          "clearing an acknowledged notification failed",
        );
      }
    }),
  );
}
