/**
 * Clearing an acknowledged notification on the other Web Push devices: a push of
 * `{"type":"clear","id":…}` (same Topic as the notification's, so one still queued at the push
 * service is replaced rather than shown), on which the service worker closes it. Best effort:
 * a clear that fails is logged, not retried. APNs and FCM devices are not cleared
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
  const web = senders.get("web");
  await Promise.all(
    due.map(async (c) => {
      if (!web || web.unconfigured || !c.token_key_id || !c.token_box) return;
      const token = tokenKeys.open({ keyId: c.token_key_id, box: c.token_box }, c.device_id);
      const result = await web
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
