/**
 * A TCP proxy in front of PostgreSQL that a test can take down and bring back, as a database
 * restart looks to Herald: open connections cut, new ones refused, then accepted again. Or hold:
 * new connections accepted, and connected onward only when released (a connection still being
 * opened, for as long as a test needs). Or stall: the open connections go silent, nothing
 * forwarded either way and nothing closed, as a network that dropped them without a word.
 */
import net, { type AddressInfo, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Cuts every connection and refuses new ones. */
  down(): Promise<void>;
  /** Accepts connections again, on the same port. */
  up(): Promise<void>;
  /** Holds new connections until `release()`; resolves once one is held. */
  hold(): Promise<void>;
  release(): void;
  /** Open connections forward nothing more and stay open; new ones are served. */
  stall(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  let held: { knock(): void; released: Promise<void>; release(): void } | undefined;
  const pairs = new Set<[Socket, Socket]>();
  const make = () =>
    net.createServer(async (client) => {
      track(client);
      if (held) {
        held.knock();
        await held.released;
        if (client.destroyed) return;
      }
      const upstream = net.connect(target.port, target.host);
      track(upstream);
      client.pipe(upstream).pipe(client);
      const pair: [Socket, Socket] = [client, upstream];
      pairs.add(pair);
      client.on("close", () => {
        pairs.delete(pair);
        upstream.destroy();
      });
      upstream.on("close", () => client.destroy());
    });
  let server = make();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const down = async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  const release = () => {
    held?.release();
    held = undefined;
  };
  return {
    port,
    down,
    async up() {
      if (server.listening) return;
      server = make();
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    },
    hold() {
      let open = () => {};
      const released = new Promise<void>((r) => {
        open = r;
      });
      return new Promise<void>((knock) => {
        held = { knock, released, release: open };
      });
    },
    release,
    stall() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    async close() {
      release();
      if (server.listening) await down();
    },
  };
}

/**
 * A proxy in front of the PostgreSQL server at `serverUrl` (the tests' `pgServerUrl`, or a
 * database's URL on it), and `through(url)`: a database URL on that server, rewritten to
 * connect through the proxy.
 */
export async function startDatabaseProxy(
  serverUrl: string,
): Promise<TcpProxy & { through(url: string): string }> {
  const db = new URL(serverUrl);
  const proxy = await startTcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
  const through = (url: string) => {
    const u = new URL(url);
    u.host = `127.0.0.1:${proxy.port}`;
    return u.toString();
  };
  return { ...proxy, through };
}
