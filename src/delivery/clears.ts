/**
 * Clearing an acknowledged (or answered) notification on the other push devices: a background
 * push saying `{"type":"clear","id":…}`. On Web Push it has the notification's Topic (one still
 * queued at the push service is replaced rather than shown) and the service worker closes it;
 * on APNs it is a background push (`content-available`) and on FCM a data message, on which the
 * app removes the shown notification. Best effort: a clear that fails is logged, not retried
 * (docs/delivery.md, "Acknowledge and escalate").
 */
import type { DueClear } from "../db/index.ts";
import type { Log } from "../domain/log.ts";
import { nothingShown } from "../domain/notification.ts";
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
      if (!sender || sender.unconfigured) return;
      let token: string | undefined;
      try {
        token = openToken(tokenKeys, c);
      } catch (err) {
        log.warn({ err, device_id: c.device_id }, "clearing: the push token cannot be opened");
        return;
      }
      if (!token) return;
      const result = await sender
        .send(
          {
            ...nothingShown,
            kind: "clear",
            notificationId: c.notification_id,
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

/** A row's sealed push token, opened; undefined when it has none. Throws when its key is gone. */
export function openToken(
  tokenKeys: PushTokenKeyRing,
  row: { token_key_id: string | null; token_box: Buffer | null; device_id: string },
): string | undefined {
  if (!row.token_key_id || !row.token_box) return undefined;
  return tokenKeys.open({ keyId: row.token_key_id, box: row.token_box }, row.device_id);
}
