/**
 * Sends the webhook outbox: claims due deliveries (leased, so each is in one worker's hands),
 * opens the endpoint's secrets, POSTs, and records every attempt. A failure is retried with
 * capped exponential backoff (5 s, 30 s, 2 min, 5 min, 15 min, 30 min, then hourly) until the
 * event is 24 hours old; an endpoint that fails `disableAfter` attempts in a row is disabled,
 * with the reason, until its owner enables it again. Delivery is at-least-once: a worker that
 * dies mid-send leaves the lease to expire, and the same event (same `webhook-id`) is sent again.
 *
 * Fair to every account: each send has a deadline for the whole exchange, and the claim keeps
 * at most a few sends in flight per endpoint and per account (PRODUCT.md), so an account's slow
 * receivers hold only its own share of the senders.
 */

import type { Db } from "../db/index.ts";
import { claimDueWebhooks, type DueWebhook, settleWebhook, type WebhookCaps } from "../db/index.ts";
import type { Log } from "../domain/log.ts";
import type { PushTokenKeyRing } from "../domain/push-token-crypto.ts";
import { webhookDisabledNotice } from "../domain/webhook-disabled.ts";
import { OutageLog } from "./outage-log.ts";
import { postWebhook } from "./webhook-sender.ts";

const backoffSeconds = [5, 30, 120, 300, 900, 1800, 3600];
const giveUpAfterMs = 24 * 3600 * 1000;

export interface WebhookWorkerOptions {
  db: () => Db;
  keys: PushTokenKeyRing;
  log: Log;
  leaseSeconds: number;
  /** The whole exchange's deadline, connect to last byte. */
  timeoutMs: number;
  /** Sends in flight per endpoint and per account, across every process. */
  caps: WebhookCaps;
  allowPrivate: boolean;
  disableAfter: number;
  /** How often to look for due events. */
  pollMs: number;
  /** Multiplies the backoff (1 in production; tests shrink it). */
  backoffScale: number;
}

export class WebhookWorker {
  readonly #o: WebhookWorkerOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #outage: OutageLog;

  constructor(opts: WebhookWorkerOptions) {
    this.#o = opts;
    this.#outage = new OutageLog(opts.log, "the webhook worker");
  }

  start(): void {
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    await Promise.all(this.#inFlight);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#round()
        .then(
          () => this.#outage.succeeded(),
          (err: unknown) => this.#outage.failed(err, "webhook round failed"),
        )
        .finally(() => this.#schedule());
    }, this.#o.pollMs);
    this.#timer.unref();
  }

  async #round(): Promise<void> {
    const room = 50 - this.#inFlight.size;
    if (room <= 0) return;
    // The lease outlives the send's deadline: a send in flight holds its place under the caps.
    const lease = Math.max(this.#o.leaseSeconds, Math.ceil(this.#o.timeoutMs / 1000) + 2);
    const due = await claimDueWebhooks(this.#o.db(), room, lease, this.#o.caps);
    for (const d of due) {
      const p = this.#send(d).finally(() => this.#inFlight.delete(p));
      this.#inFlight.add(p);
    }
  }

  #disabledNotice(d: DueWebhook, error: string) {
    const { endpoint_id: id, project_id: projectId, url, description } = d;
    const endpoint = { id, projectId, url, description };
    return webhookDisabledNotice(endpoint, this.#o.disableAfter, error, new Date());
  }

  async #send(d: DueWebhook): Promise<void> {
    const { keys } = this.#o;
    const identity = `webhook:${d.endpoint_id}`;
    const secrets = [keys.open({ keyId: d.secret_key_id, box: d.secret_box }, identity)];
    if (
      d.previous_box &&
      d.previous_key_id &&
      d.previous_until &&
      new Date(d.previous_until) > new Date()
    ) {
      secrets.push(keys.open({ keyId: d.previous_key_id, box: d.previous_box }, identity));
    }
    const answer = await postWebhook({
      url: d.url,
      id: d.event_id,
      body: JSON.stringify(d.payload),
      secrets,
      timeoutMs: this.#o.timeoutMs,
      allowPrivate: this.#o.allowPrivate,
    });
    const wait = (backoffSeconds[d.attempts] ?? 3600) * 1000 * this.#o.backoffScale;
    const next = new Date(Date.now() + wait);
    const tooOld = next.getTime() - new Date(d.event_created_at).getTime() > giveUpAfterMs;
    await settleWebhook(
      this.#o.db(),
      {
        eventId: d.event_id,
        endpointId: d.endpoint_id,
        ...answer,
        ...(answer.ok || tooOld ? {} : { retryAt: next }),
      },
      this.#o.disableAfter,
      // Written if this failure is the one that disables the endpoint.
      answer.ok ? undefined : this.#disabledNotice(d, answer.error),
    )
      .then(({ disabled }) => {
        // Said where an operator looks (the URL may hold a secret: its id says which).
        if (disabled) {
          this.#o.log.warn(
            { endpoint_id: d.endpoint_id, project_id: disabled.projectId, reason: disabled.reason },
            "a webhook endpoint was disabled: its events wait until it is enabled again",
          );
        }
      })
      .catch((err: unknown) => this.#o.log.warn({ err }, "recording a webhook attempt failed"));
  }
}
