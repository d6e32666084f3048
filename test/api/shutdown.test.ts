/**
 * Shutting down with live streams open: they end at once with `unavailable` (reconnect), and
 * the server closes well within its grace period instead of waiting it out.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { ownerPassword, startServer } from "../helpers/server.ts";

describe("SIGTERM with streams open", () => {
  it("ends the streams at once, telling their clients to reconnect, and closes in under 2 s", async () => {
    const server = await startServer({ shutdownGraceMs: 10_000, streamKeepaliveMs: 30_000 });
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: server.url }));
    const ended: Promise<unknown>[] = [];
    let opened = 0;
    for (const name of ["one", "two"]) {
      const { deviceCredential } = await devices.signInDevice({
        method: {
          case: "password",
          value: { email: "owner@example.com", password: ownerPassword },
        },
        name,
        platform: "stream",
      });
      const stream = inbox.subscribe(
        {},
        { headers: { authorization: `Bearer ${deviceCredential}` } },
      );
      ended.push(
        (async () => {
          opened++;
          for await (const _ of stream) {
            // keepalives only; none is due within this test
          }
        })().then(
          () => "ended without an error",
          (err: unknown) => err,
        ),
      );
    }
    // Both streams are registered with the hub once they answer their first read; give the
    // server a moment to take them (no message is due, so there is no event to wait on).
    await new Promise((r) => setTimeout(r, 300));
    expect(opened).toBe(2);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const err of await Promise.all(ended)) {
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unavailable);
      expect((err as ConnectError).rawMessage).toMatch(/shutting down; reconnect/);
    }
  });
});
