/**
 * A fake Web Push service (RFC 8030/8291/8292) on 127.0.0.1: it checks the VAPID JWT and key,
 * decrypts the aes128gcm payload with the subscription's private key (as the browser would; the
 * benchmark's fake only when a payload is read), records what arrived, and answers with
 * scripted statuses.
 */
import { createECDH, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:https";
import ece from "http_ece";
import type { Agent } from "undici";
import { pushServiceDispatcher } from "../../src/delivery/senders/web-push.ts";
import { p256FromRaw, verifyEs256 } from "./jwt.ts";
import { testCertificate } from "./tls.ts";

export interface ReceivedPush {
  subscription: string;
  ttl: string | undefined;
  urgency: string | undefined;
  topic: string | undefined;
  payload: Record<string, unknown>;
  plaintextBytes: number;
  vapid: { aud: string; sub: string; exp: number; k: string };
}

export interface FakeWebPush {
  origin: string;
  /** Connections that trust the fake's certificate, for the Web Push sender. */
  dispatcher: Agent;
  received: ReceivedPush[];
  /** A new browser subscription (keys generated like a browser does). */
  subscribe(): { id: string; endpoint: string; p256dh: string; auth: string };
  /** The next answers for a subscription, e.g. [{ status: 429, retryAfter: "1" }, { status: 201 }]. */
  script(id: string, answers: { status: number; retryAfter?: string }[]): void;
  /** Delays every answer by `ms` (0: answer at once), as a slow push service would. */
  hold(ms: number): void;
  close(): Promise<void>;
}

export interface FakeWebPushOptions {
  /**
   * When to decrypt a message: as it arrives (the default: a test's fake stands for the browser
   * too, and a message that does not decrypt fails the test at once), or when its payload is
   * first read (the benchmark's: a real push service never decrypts, and the fake's ECDH per
   * message would take the cores the server is measured on).
   */
  decrypt?: "on-arrival" | "when-read";
}

export async function startFakeWebPush(opts: FakeWebPushOptions = {}): Promise<FakeWebPush> {
  const { cert, key } = await testCertificate();
  const subs = new Map<string, { ecdh: ReturnType<typeof createECDH>; auth: Buffer }>();
  const scripts = new Map<string, { status: number; retryAfter?: string }[]>();
  const received: ReceivedPush[] = [];
  let origin = "";
  let holdMs = 0;
  const server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const fail = (status: number, why: string) => {
        res.writeHead(status, { "content-type": "text/plain" }).end(why);
      };
      const id = (req.url ?? "").replace(/^\/push\//, "");
      const sub = subs.get(id);
      if (!sub || req.method !== "POST") return fail(404, "no such subscription");
      const m = /^vapid t=([^,]+), k=(.+)$/.exec(req.headers.authorization ?? "");
      if (!m?.[1] || !m[2]) return fail(401, "missing VAPID authorization");
      let claims: Record<string, unknown>;
      try {
        claims = verifyEs256(m[1], p256FromRaw(Buffer.from(m[2], "base64url"))).claims;
      } catch (e) {
        return fail(403, `VAPID: ${(e as Error).message}`);
      }
      if (claims.aud !== origin) return fail(403, "VAPID aud mismatch");
      const exp = Number(claims.exp);
      if (!(exp > Date.now() / 1000 && exp <= Date.now() / 1000 + 86400))
        return fail(403, "VAPID exp");
      if (req.headers["content-encoding"] !== "aes128gcm") return fail(400, "content-encoding");
      const body = Buffer.concat(chunks);
      let plain: Buffer | undefined;
      let payload: Record<string, unknown> | undefined;
      const open = () =>
        (plain ??= ece.decrypt(body, {
          version: "aes128gcm",
          privateKey: sub.ecdh,
          authSecret: sub.auth.toString("base64url"),
        }) as Buffer);
      if (opts.decrypt !== "when-read") open();
      const answer = scripts.get(id)?.shift() ?? { status: 201 };
      received.push({
        subscription: id,
        ttl: req.headers.ttl as string | undefined,
        urgency: req.headers.urgency as string | undefined,
        topic: req.headers.topic as string | undefined,
        get payload() {
          payload ??= JSON.parse(open().toString("utf8")) as Record<string, unknown>;
          return payload;
        },
        get plaintextBytes() {
          return open().length;
        },
        vapid: { aud: String(claims.aud), sub: String(claims.sub), exp, k: m[2] },
      });
      const headers: Record<string, string> = answer.retryAfter
        ? { "retry-after": answer.retryAfter }
        : {};
      const reply = () => {
        if (!res.destroyed) res.writeHead(answer.status, headers).end();
      };
      if (holdMs > 0) setTimeout(reply, holdMs);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dispatcher = pushServiceDispatcher({ ca: cert });
  return {
    origin,
    dispatcher,
    received,
    subscribe() {
      const id = randomUUID();
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const auth = randomBytes(16);
      subs.set(id, { ecdh, auth });
      return {
        id,
        endpoint: `${origin}/push/${id}`,
        p256dh: ecdh.getPublicKey().toString("base64url"),
        auth: auth.toString("base64url"),
      };
    },
    script(id, answers) {
      scripts.set(id, [...answers]);
    },
    hold(ms) {
      holdMs = ms;
    },
    close: async () => {
      await new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
      await dispatcher.destroy();
    },
  };
}
