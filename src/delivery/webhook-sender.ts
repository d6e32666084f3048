/**
 * Sending one webhook: Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one signature per secret
 * in force, space-separated) and a POST of the JSON body. Endpoints must resolve to public
 * addresses at every connection (DNS rebinding gets no connection), unless the operator allows
 * private ones (tests). A 2xx is success; anything else, a timeout or a refused address is a
 * failed attempt with its reason.
 */
import { createHmac } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { publicOnlyLookup } from "./senders/push-address.ts";

/** The `v1,` signature of a message with a `whsec_` secret. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

export interface WebhookPost {
  url: string;
  id: string;
  body: string;
  /** The secrets in force: the current one, and the previous one during a rotation's overlap. */
  secrets: string[];
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface WebhookAnswer {
  ok: boolean;
  statusCode: number;
  error: string;
  durationMs: number;
}

export function postWebhook(p: WebhookPost): Promise<WebhookAnswer> {
  const started = performance.now();
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = p.secrets.map((s) => signWebhook(s, p.id, timestamp, p.body)).join(" ");
  const url = new URL(p.url);
  const client = url.protocol === "https:" ? https : http;
  const took = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let deadline: NodeJS.Timeout | undefined;
    const done = (a: Omit<WebhookAnswer, "durationMs">) => {
      clearTimeout(deadline);
      resolve({ ...a, durationMs: took() });
    };
    const failed = (err: Error) => done({ ok: false, statusCode: 0, error: err.message });
    const req = client.request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "Herald-Webhooks/1",
          "webhook-id": p.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature,
        },
        ...(p.allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          const code = res.statusCode ?? 0;
          const ok = code >= 200 && code < 300;
          done({ ok, statusCode: code, error: ok ? "" : `HTTP ${code}` });
        });
        res.on("error", failed);
      },
    );
    // One deadline for the whole exchange (lookup, connect, request, answer to its last byte):
    // a receiver that trickles bytes holds a sender no longer than one that says nothing.
    deadline = setTimeout(() => {
      const err = new Error(`no complete answer within ${p.timeoutMs} ms`);
      failed(err);
      req.destroy(err);
    }, p.timeoutMs);
    req.on("error", failed);
    req.end(p.body);
  });
}
