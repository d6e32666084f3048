/**
 * The one-port server: HTTP/1.1 and cleartext HTTP/2 told apart by the connection preface, even
 * when the client's first bytes arrive in pieces, and with the HTTP/2 session on the socket's
 * native handle (no JS relay in between).
 */
import http from "node:http";
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPolyglotServer, type PolyglotServer } from "../../src/server/polyglot.ts";

let server: PolyglotServer;
let port: number;
let proxy: net.Server;
let proxyPort: number;

beforeAll(async () => {
  server = createPolyglotServer(
    (req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        res.setHeader("content-type", "text/plain");
        res.end(`${req.httpVersion} ${req.method} ${req.url} ${body}`);
      });
    },
    { keepAliveTimeoutMs: 5000 },
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  // A proxy that hands the client's first 40 bytes to the server one at a time, 2 ms apart.
  proxy = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    upstream.setNoDelay(true);
    let sent = 0;
    let queue = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      queue = queue.then(async () => {
        for (let i = 0; i < chunk.length; ) {
          const n = sent < 40 ? 1 : chunk.length - i;
          upstream.write(chunk.subarray(i, i + n));
          i += n;
          sent += n;
          if (sent <= 40) await new Promise((r) => setTimeout(r, 2));
        }
      });
    });
    client.on("end", () => queue.then(() => upstream.end()));
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyPort = (proxy.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await new Promise((r) => proxy.close(r));
});

/** One POST on an HTTP/2 session; resolves with the response body. */
function h2Call(session: http2.ClientHttp2Session, path: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": path });
    let out = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      out += c;
    });
    req.on("end", () => resolve(out));
    req.on("error", reject);
    req.end(body);
  });
}

async function h2Request(p: number, path: string, body: string): Promise<string> {
  const session = http2.connect(`http://127.0.0.1:${p}`);
  const failed = new Promise<never>((_, reject) => session.once("error", reject));
  try {
    return await Promise.race([h2Call(session, path, body), failed]);
  } finally {
    session.close();
  }
}

function h1Request(p: number, path: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ port: p, host: "127.0.0.1", path, method: "POST" }, (res) => {
      let out = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        out += c;
      });
      res.on("end", () => resolve(out));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("one port for HTTP/1.1 and h2c", () => {
  it("serves both, many requests on one HTTP/2 session", async () => {
    expect(await h1Request(port, "/a", "one")).toBe("1.1 POST /a one");
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.once("error", (err) => expect.fail(String(err)));
    const bodies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => h2Call(session, `/s${i}`, `body ${i}`)),
    );
    session.close();
    expect(bodies).toEqual(Array.from({ length: 50 }, (_, i) => `2.0 POST /s${i} body ${i}`));
  });

  it("tells them apart when the first bytes arrive one at a time", async () => {
    expect(await h2Request(proxyPort, "/slow", "h2 in pieces")).toBe("2.0 POST /slow h2 in pieces");
    expect(await h1Request(proxyPort, "/slow", "h1 in pieces")).toBe("1.1 POST /slow h1 in pieces");
  });
  it("closes a connection that never says anything: after the idle time, or when closing", async () => {
    const quiet = createPolyglotServer((_req, res) => res.end(), { keepAliveTimeoutMs: 300 });
    await new Promise<void>((r) => quiet.listen(0, "127.0.0.1", r));
    const at = (quiet.address() as AddressInfo).port;
    const closedBy = (s: net.Socket) =>
      new Promise<number>((r) => s.once("close", () => r(Date.now())));
    const first = net.connect(at, "127.0.0.1");
    const t0 = Date.now();
    const ended = await closedBy(first);
    expect(ended - t0).toBeGreaterThanOrEqual(250);
    expect(ended - t0).toBeLessThan(3000);

    const second = net.connect(at, "127.0.0.1");
    await new Promise((r) => second.once("connect", r));
    await new Promise((r) => setTimeout(r, 20));
    const closed = new Promise((r) => quiet.close(r));
    quiet.closeIdleConnections();
    await closedBy(second);
    await closed;
  });
});
