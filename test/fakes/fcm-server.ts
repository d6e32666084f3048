/**
 * A fake of Google's OAuth token endpoint and the FCM HTTP v1 API on 127.0.0.1. The token
 * endpoint checks the service account's RS256 assertion; `messages:send` requires a token it
 * issued, records the message, and answers with scripted FCM errors. An agent dials it while the
 * client keeps talking to `oauth2.googleapis.com` and `fcm.googleapis.com` (TLS names included).
 * It speaks HTTP/2 (the sends) and HTTP/1.1 (the OAuth token), chosen by ALPN as Google does.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createSecureServer } from "node:http2";
import { Agent, type AgentOptions } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import { trackConnections } from "./h2-server.ts";
import { verifyRs256 } from "./jwt.ts";
import { testCertificate } from "./tls.ts";

export interface ReceivedFcm {
  token: string;
  message: Record<string, unknown> & {
    android?: { priority?: string; ttl?: string; collapse_key?: string };
    data?: Record<string, string>;
    notification?: { title?: string; body?: string };
  };
  bytes: number;
  /** "2.0" or "1.1". */
  httpVersion: string;
}

export interface FakeFcm {
  /** The port it listens on (127.0.0.1), for agents in other processes. */
  port: number;
  projectId: string;
  serviceAccountFile: string;
  agent: Agent;
  received: ReceivedFcm[];
  tokensIssued: () => number;
  /**
   * Forgets every access token issued, as Google does with one past its hour: what firebase-admin
   * meets when it kept one longer by its own clock (a wall clock stepped back).
   */
  expireTokens(): void;
  /** HTTP/2 connections opened to it so far. */
  sessionsOpened: () => number;
  script(
    token: string,
    answers: { status: number; fcmError?: string; retryAfter?: string }[],
  ): void;
  close(): Promise<void>;
}

export class RedirectingAgent extends Agent {
  readonly #port: number;
  readonly #ca: string;
  constructor(port: number, ca: string, opts: AgentOptions) {
    super(opts);
    this.#port = port;
    this.#ca = ca;
  }
  override createConnection(options: tls.ConnectionOptions & { host?: string }): Duplex {
    return tls.connect({
      ...options,
      host: "127.0.0.1",
      port: this.#port,
      servername: options.servername || options.host,
      ca: this.#ca,
    });
  }
}

const statusName: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

export async function startFakeFcm(): Promise<FakeFcm> {
  const { cert, key } = await testCertificate();
  const projectId = "herald-test";
  const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const clientEmail = `herald@${projectId}.iam.gserviceaccount.com`;
  const issued = new Set<string>();
  const received: ReceivedFcm[] = [];
  const scripts = new Map<string, { status: number; fcmError?: string; retryAfter?: string }[]>();
  const server = createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
    const host = req.headers[":authority"] ?? req.headers.host;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { "content-type": "application/json", ...headers })
          .end(JSON.stringify(value));
      if (host?.startsWith("oauth2.googleapis.com") && req.url === "/token") {
        const form = new URLSearchParams(raw);
        try {
          const { claims } = verifyRs256(form.get("assertion") ?? "", pair.publicKey);
          const scopes = String(claims.scope).split(" ");
          if (claims.iss !== clientEmail || claims.aud !== "https://oauth2.googleapis.com/token")
            throw new Error("claims");
          if (!scopes.includes("https://www.googleapis.com/auth/firebase.messaging"))
            throw new Error("scope");
        } catch (e) {
          return json(400, { error: "invalid_grant", error_description: (e as Error).message });
        }
        const token = `ya29.${randomBytes(16).toString("hex")}`;
        issued.add(token);
        return json(200, { access_token: token, expires_in: 3600, token_type: "Bearer" });
      }
      if (
        host?.startsWith("fcm.googleapis.com") &&
        req.url === `/v1/projects/${projectId}/messages:send`
      ) {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        if (!bearer || !issued.has(bearer)) {
          return json(401, {
            error: { code: 401, message: "bad token", status: "UNAUTHENTICATED" },
          });
        }
        const message = (JSON.parse(raw) as { message: ReceivedFcm["message"] }).message;
        const token = String(message.token);
        received.push({
          token,
          message,
          bytes: Buffer.byteLength(
            JSON.stringify({ notification: message.notification, data: message.data }),
          ),
          httpVersion: req.httpVersion,
        });
        const answer = scripts.get(token)?.shift();
        if (!answer)
          return json(200, {
            name: `projects/${projectId}/messages/${randomBytes(8).toString("hex")}`,
          });
        return json(
          answer.status,
          {
            error: {
              code: answer.status,
              message: answer.fcmError ?? "error",
              status: statusName[answer.status] ?? "UNKNOWN",
              details: answer.fcmError
                ? [
                    {
                      "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                      errorCode: answer.fcmError,
                    },
                  ]
                : [],
            },
          },
          answer.retryAfter ? { "retry-after": answer.retryAfter } : {},
        );
      }
      json(404, {
        error: {
          code: 404,
          message: `no route ${host}${req.url}`,
          status: "NOT_FOUND",
        },
      });
    });
  });
  const connections = trackConnections(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), "herald-fcm-"));
  const serviceAccountFile = join(dir, "service-account.json");
  writeFileSync(
    serviceAccountFile,
    JSON.stringify({
      type: "service_account",
      project_id: projectId,
      private_key_id: "key1",
      private_key: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      client_email: clientEmail,
      client_id: "1",
      token_uri: "https://oauth2.googleapis.com/token",
    }),
    { mode: 0o600 },
  );
  return {
    port,
    projectId,
    serviceAccountFile,
    agent: new RedirectingAgent(port, cert, { keepAlive: true }),
    received,
    tokensIssued: () => issued.size,
    expireTokens: () => issued.clear(),
    sessionsOpened: connections.sessionsOpened,
    script(token, answers) {
      scripts.set(token, [...answers]);
    },
    close: async () => {
      await connections.close();
      // The service account file holds a private key.
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
