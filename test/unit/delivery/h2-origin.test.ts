/**
 * The HTTP/2 connections under the APNs sender (src/delivery/senders/h2-origin.ts), against a
 * server that completes TLS (offering h2) and then says nothing: its requests fail after the
 * timeout rather than wait for SETTINGS forever, and the next request tries a new connection.
 */
import type { Socket } from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { H2Origin } from "../../../src/delivery/senders/h2-origin.ts";
import { testCertificate } from "../../fakes/tls.ts";

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
});
