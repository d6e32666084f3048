/**
 * The APNs sender's connections (senders/h2-origin.ts): a few HTTP/2 connections with many
 * streams each, no more streams on one than the server's SETTINGS allow, a new connection after
 * APNs sends GOAWAY, and an APNs that cannot be reached is a retry, not a crash.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { createApnsSender } from "../../src/delivery/senders/apns.ts";
import type { Sender } from "../../src/delivery/senders/sender.ts";
import { type FakeApns, startFakeApns } from "../fakes/apns-server.ts";

function senderFor(fake: Pick<FakeApns, "teamId" | "keyId" | "signingKey" | "ca">, origin: string) {
  return createApnsSender({
    teamId: fake.teamId,
    keyId: fake.keyId,
    signingKey: fake.signingKey,
    bundleId: "dev.herald.app",
    sandbox: false,
    endpoint: { origin, ca: fake.ca },
  });
}

/** `count` pushes at once, numbered from `from`; their outcomes. */
function sendMany(sender: Sender, count: number, from = 0) {
  return Promise.all(
    Array.from({ length: count }, (_, k) => {
      const i = from + k;
      return sender.send(
        {
          notificationId: `0190c0de-0000-7000-8000-${i.toString().padStart(12, "0")}`,
          topic: "t",
          title: "many",
          message: "",
          priority: "normal",
          click_url: null,
          replace_key: null,
          expiresAt: new Date(Date.now() + 60_000),
          hasTtl: true,
        },
        i.toString(16).padStart(64, "a"),
      );
    }),
  );
}

/** A fake APNs (with `opts`) and a sender to it for `run`; both closed after. */
async function withApns(
  opts: Parameters<typeof startFakeApns>[0],
  run: (fake: FakeApns, sender: Sender) => Promise<void>,
) {
  const fake = await startFakeApns(opts);
  const sender = senderFor(fake, fake.origin);
  try {
    await run(fake, sender);
  } finally {
    await sender.close();
    await fake.close();
  }
}

describe("the APNs sender's connections", () => {
  it("multiplexes pushes over a few HTTP/2 connections, many streams at once", () =>
    withApns({}, async (fake, sender) => {
      const results = await sendMany(sender, 300);
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      expect(fake.received).toHaveLength(300);
      expect(fake.connections).toBeLessThanOrEqual(4);
      // One request per connection at a time (apns2's own pool) could never exceed 4 here.
      expect(fake.peakOpenStreams).toBeGreaterThan(4);
    }));

  it("opens no more streams on a connection than the server's SETTINGS allow", () =>
    withApns({ maxConcurrentStreams: 5 }, async (fake, sender) => {
      const results = await sendMany(sender, 200);
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      expect(fake.received).toHaveLength(200);
      expect(fake.peakStreamsPerConnection).toBeLessThanOrEqual(5);
      expect(fake.connections).toBeLessThanOrEqual(4);
    }));

  it("opens a new connection after APNs sends GOAWAY, and loses no push", () =>
    withApns({}, async (fake, sender) => {
      expect((await sendMany(sender, 20)).every((r) => r.kind === "ok")).toBe(true);
      const before = fake.connections;
      fake.goAway();
      const results = await sendMany(sender, 50, 20);
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      expect(fake.connections).toBeGreaterThan(before);
      expect(new Set(fake.received.map((r) => r.token)).size).toBe(70);
    }));

  it("answers retry when APNs cannot be reached, or closes the connection unanswered", async () => {
    const fake = await startFakeApns();
    // A port that takes connections and closes them at once, and one nobody listens on.
    const door = createServer((s) => s.destroy());
    await new Promise<void>((r) => door.listen(0, "127.0.0.1", r));
    const closing = `https://127.0.0.1:${(door.address() as { port: number }).port}`;
    const nobody = await new Promise<string>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(`https://127.0.0.1:${port}`));
      });
    });
    try {
      for (const origin of [closing, nobody]) {
        const sender = senderFor(fake, origin);
        const results = await sendMany(sender, 3);
        expect(results.map((r) => r.kind)).toEqual(["retry", "retry", "retry"]);
        await sender.close();
      }
    } finally {
      door.close();
      await fake.close();
    }
  });
});
