/**
 * A webhook receiver on 127.0.0.1 that verifies every message with the `standardwebhooks`
 * library (the reference implementation of the scheme) against each secret it is given, and
 * answers what the test scripts (200 by default).
 */
import http from "node:http";
import { Webhook } from "standardwebhooks";

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Which of the receiver's secrets verified it. */
  verifiedBy: string[];
  /** The status it was answered with; undefined while held (or never, if the sender died). */
  answered?: number;
}

export async function startWebhookReceiver() {
  const received: ReceivedWebhook[] = [];
  let secrets: string[] = [];
  const answers: number[] = [];
  let always: number | undefined;
  let holding = false;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      const headers = {
        "webhook-id": String(req.headers["webhook-id"]),
        "webhook-timestamp": String(req.headers["webhook-timestamp"]),
        "webhook-signature": String(req.headers["webhook-signature"]),
      };
      const verifiedBy = secrets.filter((s) => {
        try {
          new Webhook(s).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const r: ReceivedWebhook = {
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        payload: JSON.parse(body),
        verifiedBy,
      };
      received.push(r);
      if (holding) return; // never answered: the sender's lease runs out
      r.answered = answers.shift() ?? always ?? 200;
      res.statusCode = r.answered;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Secrets to verify with. */
    trust(...s: string[]) {
      secrets = s;
    },
    /** Answers the next requests with these statuses, then `always` (200). */
    answer(...statuses: number[]) {
      answers.push(...statuses);
    },
    /** While on, requests are read and never answered. */
    hold(on: boolean) {
      holding = on;
    },
    answerAlways(status: number | undefined) {
      always = status;
    },
    of(type: string) {
      return received.filter((r) => r.payload.type === type);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
