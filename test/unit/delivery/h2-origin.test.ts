/**
 * The HTTP/2 connections under the APNs sender (src/delivery/senders/h2-origin.ts), against a
 * server that completes TLS (offering h2) and then says nothing: its requests fail after the
 * timeout rather than wait for SETTINGS forever, and the next request tries a new connection.
 * And against a connection that goes silent once in use (a NAT or firewall that forgot it and
 * drops its packets without a word): it is given up, and the next request opens a new one.
 */
import type { Socket } from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { H2Origin } from "../../../src/delivery/senders/h2-origin.ts";
import { startFakeApns } from "../../fakes/apns-server.ts";
import { testCertificate } from "../../fakes/tls.ts";
import { startTcpProxy } from "../../helpers/tcp-proxy.ts";

let silent: tls.Server;
let ca = "";
let origin = "";
const sockets: Socket[] = [];

beforeAll(async () => {
  const { cert, key } = await testCertificate();
  ca = cert;
  silent = tls.createServer({ cert, key, ALPNProtocols: ["h2"] }, (s) => {
    sockets.push(s);
  });
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  origin = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
});

describe("H2Origin", () => {
  it("fails the requests of a connection whose server sends no SETTINGS, then tries anew", async () => {
    const pool = new H2Origin(origin, { ca, timeoutMs: 300 });
    const request = () => pool.request({ path: "/3/device/x", method: "POST", headers: {} });
    try {
      const t0 = performance.now();
      const outcomes = await Promise.allSettled([request(), request(), request()]);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/no HTTP\/2 SETTINGS/);
      expect(performance.now() - t0).toBeLessThan(3000);
      expect(sockets).toHaveLength(1);
      await expect(request()).rejects.toThrow(/no HTTP\/2 SETTINGS/);
      expect(sockets).toHaveLength(2);
    } finally {
      await pool.destroy();
    }
  });

  /** A fake APNs behind a proxy that can go silent, and a pool to it with `opts`. */
  async function throughProxy(opts: ConstructorParameters<typeof H2Origin>[1]) {
    const apns = await startFakeApns();
    const proxy = await startTcpProxy({
      host: "127.0.0.1",
      port: Number(new URL(apns.origin).port),
    });
    const pool = new H2Origin(`https://127.0.0.1:${proxy.port}`, { ca: apns.ca, ...opts });
    // Refused (no provider token), but answered: an exchange on the connection.
    const request = () =>
      pool.request({ path: `/3/device/${"a".repeat(64)}`, method: "POST", headers: {} });
    const close = async () => {
      await pool.destroy();
      await proxy.close();
      await apns.close();
    };
    return { apns, proxy, request, close };
  }

  it("gives up a connection that went silent once a request on it times out", async () => {
    const { apns, proxy, request, close } = await throughProxy({ timeoutMs: 500, probeMs: 200 });
    try {
      expect((await request()).statusCode).toBe(403);
      proxy.stall();
      await expect(request()).rejects.toThrow(/did not answer in time/);
      // Before, the next request went to the same dead connection, and timed out again.
      expect((await request()).statusCode).toBe(403);
      expect(apns.connections).toBe(2);
    } finally {
      await close();
    }
  });

  it("PINGs a connection quiet for a while before using it, failing fast when it is silent", async () => {
    const { apns, proxy, request, close } = await throughProxy({
      // Room for a loaded machine's PING before the stall; still a tenth of the request's.
      timeoutMs: 20_000,
      probeMs: 1_000,
      quietMs: 0,
    });
    try {
      expect((await request()).statusCode).toBe(403);
      proxy.stall();
      const t0 = performance.now();
      await expect(request()).rejects.toThrow(/went silent/);
      // The PING's deadline, not the request's.
      expect(performance.now() - t0).toBeLessThan(10_000);
      expect((await request()).statusCode).toBe(403);
      expect(apns.connections).toBe(2);
    } finally {
      await close();
    }
  });
});
