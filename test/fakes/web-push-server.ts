/**
 * A fake Web Push service (RFC 8030/8291/8292) on 127.0.0.1: it checks the VAPID JWT and key,
 * decrypts the aes128gcm payload with the subscription's private key (as the browser would; the
 * benchmark's fake only when a payload is read), records what arrived, and answers with
 * scripted statuses. It speaks HTTP/2 and HTTP/1.1, chosen by ALPN as the public push services
 * do, or HTTP/1.1 alone (`http1Only`).
 */
import { createECDH, randomBytes, randomUUID } from "node:crypto";
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import { createServer } from "node:https";
import ece from "http_ece";
import { trackConnections } from "./h2-server.ts";
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
  /** "2.0" or "1.1". */
  httpVersion: string;
}

export interface FakeWebPush {
  origin: string;
  /** The certificate to trust for it (the Web Push sender's `ca`). */
  ca: string;
  /** HTTP/2 connections opened to it so far. */
  sessionsOpened(): number;
  /** TLS connections to it open now. */
  openConnections(): number;
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
  /** Offer HTTP/1.1 alone in ALPN (a push service without HTTP/2). */
  http1Only?: boolean;
  /** Listen on this port (a service that comes back changed); default any free one. */
  port?: number;
  /** Refuse a VAPID subject as Apple's push service does (`appleTakes`). */
  appleSubjects?: boolean;
}

/**
 * Apple's rule for the VAPID subject, as its documentation says it ("the JWT subject claim isn't
 * a URL or mailto:" is a BadJwtToken) and as seen by web-push's users (a subject on localhost,
 * `mailto:…@localhost` or `https://localhost`, or on `.invalid`, is refused too).
 */
function appleTakes(sub: string): boolean {
  let host: string | undefined;
  if (sub.startsWith("mailto:")) host = sub.split("@")[1];
  else if (sub.startsWith("https://")) host = new URL(sub).hostname;
  return host !== undefined && host !== "localhost" && !/\.(localhost|invalid)$/.test(host);
}

export async function startFakeWebPush(opts: FakeWebPushOptions = {}): Promise<FakeWebPush> {
  const { cert, key } = await testCertificate();
  const subs = new Map<string, { ecdh: ReturnType<typeof createECDH>; auth: Buffer }>();
  const scripts = new Map<string, { status: number; retryAfter?: string }[]>();
  const received: ReceivedPush[] = [];
  let origin = "";
  let holdMs = 0;
  const handle = (req: Http2ServerRequest, res: Http2ServerResponse) => {
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
      // The audience is the origin the push was sent to (127.0.0.1 or localhost here).
      const authority = req.headers[":authority"] ?? req.headers.host;
      if (claims.aud !== `https://${authority}`) return fail(403, "VAPID aud mismatch");
      const exp = Number(claims.exp);
      if (!(exp > Date.now() / 1000 && exp <= Date.now() / 1000 + 86400))
        return fail(403, "VAPID exp");
      if (opts.appleSubjects && !appleTakes(String(claims.sub))) {
        res.writeHead(403, { "content-type": "application/json" });
        return res.end(JSON.stringify({ reason: "BadJwtToken" }));
      }
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
        httpVersion: req.httpVersion,
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
  };
  const server = opts.http1Only
    ? createServer({ cert, key }, handle as never)
    : createSecureServer({ cert, key, allowHTTP1: true }, handle);
  const connections = trackConnections(server);
  await new Promise<void>((r) => server.listen(opts.port ?? 0, "127.0.0.1", r));
  origin = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    origin,
    ca: cert,
    sessionsOpened: connections.sessionsOpened,
    openConnections: connections.openConnections,
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
    close: () => connections.close(),
  };
}
