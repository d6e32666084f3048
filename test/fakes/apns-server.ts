/**
 * A fake APNs provider API on 127.0.0.1: HTTP/2 over TLS, `POST /3/device/<token>`, checking the
 * ES256 provider token (kid, iss, iat) against the team's public key, recording the headers and
 * payload that arrive, and answering with scripted statuses and reasons.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import http2 from "node:http2";
import { verifyEs256 } from "./jwt.ts";
import { testCertificate } from "./tls.ts";

export interface ReceivedApns {
  token: string;
  headers: Record<string, string | undefined>;
  payload: { aps: Record<string, unknown>; [k: string]: unknown };
  payloadBytes: number;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** A scripted answer; `after`, when given, holds it until that promise settles. */
export interface ScriptedAnswer {
  status: number;
  reason?: string;
  retryAfter?: string;
  after?: Promise<unknown>;
}

export interface FakeApns {
  origin: string;
  ca: string;
  teamId: string;
  keyId: string;
  /** The provider key (PKCS#8 PEM) that Herald is configured with. */
  signingKey: string;
  received: ReceivedApns[];
  /** The most requests that were open at once (arrived, not yet answered), over all connections. */
  readonly peakOpenStreams: number;
  /** HTTP/2 connections opened so far. */
  readonly connections: number;
  /** The most requests open at once on any one connection. */
  readonly peakStreamsPerConnection: number;
  /** Sends GOAWAY on every open connection (as APNs does when it rotates them). */
  goAway(): void;
  script(token: string, answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

/** `maxConcurrentStreams`: what the fake's SETTINGS allow on a connection (default: no limit). */
export async function startFakeApns(
  opts: { maxConcurrentStreams?: number } = {},
): Promise<FakeApns> {
  const { cert, key } = await testCertificate();
  const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const publicKey: KeyObject = pair.publicKey;
  const teamId = "TEAM123456";
  const keyId = "KEY1234567";
  const received: ReceivedApns[] = [];
  const scripts = new Map<string, ScriptedAnswer[]>();
  const server = http2.createSecureServer({
    cert,
    key,
    ...(opts.maxConcurrentStreams
      ? { settings: { maxConcurrentStreams: opts.maxConcurrentStreams } }
      : {}),
  });
  const openOn = new Map<http2.ServerHttp2Session, number>();
  let peakStreamsPerConnection = 0;
  const sessions = new Set<http2.ServerHttp2Session>();
  let open = 0;
  let peakOpenStreams = 0;
  let connections = 0;
  server.on("session", (s) => {
    connections++;
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    open++;
    peakOpenStreams = Math.max(peakOpenStreams, open);
    const session = stream.session as http2.ServerHttp2Session;
    openOn.set(session, (openOn.get(session) ?? 0) + 1);
    peakStreamsPerConnection = Math.max(peakStreamsPerConnection, openOn.get(session) ?? 0);
    stream.once("close", () => {
      open--;
      openOn.set(session, (openOn.get(session) ?? 1) - 1);
    });
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const answer = (status: number, reason?: string, extra: Record<string, string> = {}) => {
        stream.respond({
          ":status": status,
          "apns-id": "00000000-0000-0000-0000-000000000000",
          ...extra,
        });
        stream.end(reason ? JSON.stringify({ reason, timestamp: Date.now() }) : undefined);
      };
      const path = String(headers[":path"]);
      const m = /^\/3\/device\/([0-9a-fA-F]+)$/.exec(path);
      if (headers[":method"] !== "POST" || !m?.[1]) return answer(404, "BadPath");
      const auth = /^bearer (.+)$/.exec(String(headers.authorization ?? ""));
      if (!auth?.[1]) return answer(403, "MissingProviderToken");
      try {
        const jwt = verifyEs256(auth[1], publicKey);
        const iat = Number(jwt.claims.iat);
        if (jwt.header.kid !== keyId || jwt.claims.iss !== teamId)
          return answer(403, "InvalidProviderToken");
        if (!(iat <= Date.now() / 1000 + 5 && iat > Date.now() / 1000 - 3600))
          return answer(403, "ExpiredProviderToken");
      } catch {
        return answer(403, "InvalidProviderToken");
      }
      const body = Buffer.concat(chunks);
      if (body.length > 4096) return answer(413, "PayloadTooLarge");
      const pick = (n: string) => (headers[n] === undefined ? undefined : String(headers[n]));
      received.push({
        token: m[1],
        headers: {
          "apns-priority": pick("apns-priority"),
          "apns-expiration": pick("apns-expiration"),
          "apns-collapse-id": pick("apns-collapse-id"),
          "apns-push-type": pick("apns-push-type"),
          "apns-topic": pick("apns-topic"),
          authorization: pick("authorization"),
        },
        payload: JSON.parse(body.toString("utf8")),
        payloadBytes: body.length,
        at: Date.now(),
      });
      const scripted = scripts.get(m[1])?.shift();
      if (!scripted) return answer(200);
      const send = () =>
        answer(
          scripted.status,
          scripted.reason,
          scripted.retryAfter ? { "retry-after": scripted.retryAfter } : {},
        );
      if (scripted.after) void scripted.after.finally(() => stream.destroyed || send());
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
    ca: cert,
    teamId,
    keyId,
    signingKey: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    received,
    get peakOpenStreams() {
      return peakOpenStreams;
    },
    get connections() {
      return connections;
    },
    get peakStreamsPerConnection() {
      return peakStreamsPerConnection;
    },
    goAway() {
      for (const s of sessions) s.goaway();
    },
    script(token, answers) {
      scripts.set(token, [...answers]);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}
