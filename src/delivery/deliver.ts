/**
 * One push delivery, claimed by the worker (worker.ts): sent through its platform's sender
 * within the send timeout, and its outcome settled: sent, tried again later (with backoff,
 * until its ttl or 24 hours), or failed with the reason (a dead token also disables its device).
 */
import type { DeviceRepository, DueDelivery, Outcome } from "../db/index.ts";
import type { Log } from "../domain/log.ts";
import type { PushTokenKeyRing } from "../domain/push-token-crypto.ts";
import { backoffMs, deadline } from "../domain/retry.ts";
import { openToken } from "./clears.ts";
import { pushMessageOf } from "./push-message.ts";
import { type Sender, sendWithin } from "./senders/sender.ts";
import type { ThrottledLog } from "./throttled-log.ts";

/** What a send needs of its worker. */
export interface SendDeps {
  devices: DeviceRepository;
  tokenKeys: PushTokenKeyRing;
  senders: ReadonlyMap<string, Sender>;
  sendTimeoutMs: number;
  log: Log;
  /** Where a provider's refusal of Herald's configuration is said (once a minute a platform). */
  configurationLog: ThrottledLog;
  /** The platform and the send's time (s), for metrics. */
  onSent: (platform: string, seconds: number) => void;
}

/**
 * Sends `d` and settles its outcome; `release` is called when its push service has answered
 * (or the send timed out): the account's share of sends in flight is freed before the outcome is
 * written.
 */
export async function deliver(
  d: DueDelivery,
  release: () => void,
  settle: (outcome: Outcome) => Promise<void>,
  o: SendDeps,
): Promise<void> {
  const until = deadline(d.created_at, d.expires_at);
  const giveUp = (why: string) =>
    d.expires_at
      ? settle({ state: "expired", error: `ttl passed: ${why}` })
      : settle({ state: "failed", error: `gave up after 24 hours: ${why}` });
  if (Date.now() >= until.getTime()) return giveUp("not sent in time");
  const sender = o.senders.get(d.platform);
  let token: string | undefined;
  try {
    token = openToken(o.tokenKeys, d);
  } catch (err) {
    // Its key left the ring before reencrypt-tokens ran: never sendable; say why, go on.
    return settle({
      state: "failed",
      error: `push token cannot be opened: ${(err as Error).message}`,
    });
  }
  if (!sender || !token) {
    return settle({ state: "failed", error: `no push channel for ${d.platform}` });
  }
  const message = pushMessageOf(d, until);
  const started = performance.now();
  const result = await sendWithin(sender, message, token, o.sendTimeoutMs, o.log);
  o.onSent(d.platform, (performance.now() - started) / 1000);
  release();
  switch (result.kind) {
    case "ok":
      return settle({ state: "sent" });
    case "dead_token":
      await o.devices.disable(d.device_id, result.reason);
      return settle({ state: "failed", error: result.reason });
    case "permanent":
      return settle({ state: "failed", error: result.reason });
    case "misconfigured":
      o.configurationLog.error(
        d.platform,
        { platform: d.platform, reason: result.reason, notification_id: d.notification_id },
        "the push provider refused Herald's configuration: this send failed, the device is kept",
      );
      return settle({ state: "failed", error: result.reason });
    case "retry": {
      const next = new Date(Date.now() + backoffMs(d.attempts, result.retryAfterMs));
      if (next >= until) return giveUp(result.reason);
      return settle({ state: "pending", error: result.reason, nextAttemptAt: next });
    }
  }
}
