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
import { waitFor } from "../helpers/wait.ts";

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
          for await (const _ of stream) {
            // The keepalive the server writes once the stream is registered; no other is due.
            opened++;
          }
        })().then(
          () => "ended without an error",
          (err: unknown) => err,
        ),
      );
    }
    // Both streams registered with the hub: each has had its opening keepalive.
    await waitFor(() => opened === 2);
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
