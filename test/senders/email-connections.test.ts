/**
 * Email in, shared fairly: one client address holds at most its share of the SMTP listener's
 * connections (here 3). A sender that opens more, or keeps them open, gets 421 for the extra
 * ones, while another address (127.0.0.2, a second loopback address) still gets in; a connection
 * closed gives its place back. Before, one address could hold all 100 and lock everyone out.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultLimits } from "../../src/domain/limits.ts";
import { freePort } from "../helpers/ports.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  port = await freePort();
  server = await startServer({
    smtp: { port, tls: undefined, domain: undefined },
    limits: { ...defaultLimits, smtpConnectionsPerAddress: 3 },
  });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await server?.close();
});

/** Connects from `from` and resolves with the server's first line (its greeting or refusal). */
function greeting(from = "127.0.0.1"): Promise<{ line: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: from });
    sockets.push(socket);
    let said = "";
    socket.on("error", reject);
    socket.on("data", (d) => {
      said += String(d);
      if (said.includes("\r\n")) resolve({ line: said.split("\r\n")[0] ?? "", socket });
    });
  });
}

describe("SMTP connections per client address", () => {
  it("refuses one address past its share, lets another in, and gives a closed one's place back", async () => {
    const held = [await greeting(), await greeting(), await greeting()];
    for (const h of held) expect(h.line).toMatch(/^220 /);
    const extra = await greeting();
    expect(extra.line).toBe("421 4.7.0 at most 3 connections at once from one address");
    // Another sender is not locked out by the first one's connections.
    expect((await greeting("127.0.0.2")).line).toMatch(/^220 /);
    // One of the three closes (QUIT): its place is given back.
    held[0]?.socket.end("QUIT\r\n");
    let again = "";
    await waitFor(async () => {
      const g = await greeting();
      again = g.line;
      g.socket.end("QUIT\r\n");
      return again.startsWith("220 ");
    }, 5_000);
    expect(again).toMatch(/^220 /);
  });
});
