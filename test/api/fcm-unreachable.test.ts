/**
 * FCM's sends go over HTTP/2 connections of the sender's own (senders/h2-origin.ts), opened
 * through the agent that also fetches the OAuth token. A connection that cannot be opened fails
 * the send before firebase-admin sees it: that is a retry ("could not be reached"), not a
 * permanent failure, and the next send tries a new connection.
 */
import net from "node:net";
import type { Duplex } from "node:stream";
import type tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFcmSender } from "../../src/delivery/senders/fcm.ts";
import { type FakeFcm, RedirectingAgent, startFakeFcm } from "../fakes/fcm-server.ts";
import { testCertificate } from "../fakes/tls.ts";

/** The OAuth token from the fake; FCM itself at a port where nothing listens. */
class NoFcmAgent extends RedirectingAgent {
  readonly attempts: string[] = [];
  readonly closedPort: number;
  constructor(port: number, ca: string, closedPort: number) {
    super(port, ca, { keepAlive: true });
    this.closedPort = closedPort;
  }
  override createConnection(options: tls.ConnectionOptions & { host?: string }): Duplex {
    if (options.host !== "fcm.googleapis.com") return super.createConnection(options);
    this.attempts.push(String(options.ALPNProtocols));
    return net.connect({ host: "127.0.0.1", port: this.closedPort });
  }
}

let fcm: FakeFcm;
let closedPort = 0;
beforeAll(async () => {
  fcm = await startFakeFcm();
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
});
afterAll(async () => {
  await fcm.close();
});

describe("FCM unreachable", () => {
  it("is a retry, and the next send opens a new connection", async () => {
    const agent = new NoFcmAgent(fcm.port, (await testCertificate()).cert, closedPort);
    const sender = createFcmSender({ serviceAccountFile: fcm.serviceAccountFile, agent });
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
    try {
      for (const attempt of [1, 2]) {
        const result = await sender.send(message, `fcm-token-x:APA91b${"x".repeat(20)}`);
        expect(result).toEqual({ kind: "retry", reason: "FCM could not be reached" });
        expect(agent.attempts).toHaveLength(attempt);
      }
      expect(agent.attempts[0]).toBe("h2");
      expect(fcm.received).toHaveLength(0);
    } finally {
      await sender.close();
      agent.destroy();
    }
  });
});
