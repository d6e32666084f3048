/**
 * FCM's sends go over HTTP/2 connections of the sender's own (senders/h2-origin.ts), opened
 * through the agent that also fetches the OAuth token. A connection that cannot be opened fails
 * the send before firebase-admin sees it: that is a retry ("could not be reached"), not a
 * permanent failure, and the next send tries a new connection. Google's token service out of
 * reach is a retry too; a key it refuses is the operator's to fix ("misconfigured").
 */
import { generateKeyPairSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import type { Duplex } from "node:stream";
import type tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFcmSender } from "../../src/delivery/senders/fcm.ts";
import { type FakeFcm, RedirectingAgent, startFakeFcm } from "../fakes/fcm-server.ts";
import { testCertificate } from "../fakes/tls.ts";

/** The fake, but `host` (FCM, or Google's token service) at a port where nothing listens. */
class UnreachableAgent extends RedirectingAgent {
  readonly attempts: string[] = [];
  readonly host: string;
  readonly closedPort: number;
  constructor(port: number, ca: string, host: string, closedPort: number) {
    super(port, ca, { keepAlive: true });
    this.host = host;
    this.closedPort = closedPort;
  }
  override createConnection(options: tls.ConnectionOptions & { host?: string }): Duplex {
    if (options.host !== this.host) return super.createConnection(options);
    this.attempts.push(String(options.ALPNProtocols));
    return net.connect({ host: "127.0.0.1", port: this.closedPort });
  }
}

let fcm: FakeFcm;
let ca = "";
let closedPort = 0;
beforeAll(async () => {
  fcm = await startFakeFcm();
  ca = (await testCertificate()).cert;
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
});
afterAll(async () => {
  await fcm.close();
});

const message = {
  notificationId: "0190a0b0-0000-7000-8000-000000000001",
  topic: "default",
  title: "Deploy finished",
  message: "api is live",
  priority: "default" as const,
  click_url: null,
  replace_key: null,
  expiresAt: new Date(Date.now() + 60_000),
  hasTtl: false,
};
const pushToken = `fcm-token-x:APA91b${"x".repeat(20)}`;

/**
 * A copy of the fake's service account file (or one with another key). firebase-admin keeps one
 * credential per file for the whole process, with the agent of its first use: a test with an
 * agent of its own needs a file of its own.
 */
function accountFile(name: string, privateKey?: string): string {
  const account = JSON.parse(readFileSync(fcm.serviceAccountFile, "utf8")) as Record<
    string,
    string
  >;
  if (privateKey) account.private_key = privateKey;
  const file = `${fcm.serviceAccountFile}.${name}.json`;
  writeFileSync(file, JSON.stringify(account), { mode: 0o600 });
  return file;
}

describe("FCM unreachable", () => {
  it("is a retry, and the next send opens a new connection", async () => {
    const agent = new UnreachableAgent(fcm.port, ca, "fcm.googleapis.com", closedPort);
    const sender = createFcmSender({ serviceAccountFile: accountFile("no-fcm"), agent });
    try {
      for (const attempt of [1, 2]) {
        expect(await sender.send(message, pushToken)).toEqual({
          kind: "retry",
          reason: "FCM could not be reached",
        });
        expect(agent.attempts).toHaveLength(attempt);
      }
      expect(agent.attempts[0]).toBe("h2");
      expect(fcm.received).toHaveLength(0);
    } finally {
      await sender.close();
      agent.destroy();
    }
  });

  it("is a retry when Google's token service cannot be reached", async () => {
    const agent = new UnreachableAgent(fcm.port, ca, "oauth2.googleapis.com", closedPort);
    const sender = createFcmSender({ serviceAccountFile: accountFile("no-oauth"), agent });
    try {
      expect(await sender.send(message, pushToken)).toEqual({
        kind: "retry",
        reason: "FCM: Google's OAuth token service could not be reached",
      });
      expect(agent.attempts.length).toBeGreaterThanOrEqual(1);
      expect(fcm.tokensIssued()).toBe(0);
      expect(fcm.received).toHaveLength(0);
    } finally {
      await sender.close();
      agent.destroy();
    }
  });

  it("is the operator's to fix when the token service refuses the key", async () => {
    // A key Google (the fake) does not know: it answers invalid_grant.
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const file = accountFile("revoked", other.export({ type: "pkcs8", format: "pem" }).toString());
    const agent = new RedirectingAgent(fcm.port, ca, { keepAlive: true });
    const sender = createFcmSender({ serviceAccountFile: file, agent });
    try {
      const result = await sender.send(message, pushToken);
      expect(result.kind).toBe("misconfigured");
      expect((result as { reason: string }).reason).toMatch(
        /invalid_grant.*check the FCM service account/s,
      );
      expect(fcm.tokensIssued()).toBe(0);
      expect(fcm.received).toHaveLength(0);
    } finally {
      await sender.close();
      agent.destroy();
    }
  });
});
