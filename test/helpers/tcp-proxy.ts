/**
 * A TCP proxy in front of PostgreSQL that a test can take down and bring back, as a database
 * restart looks to Herald: open connections cut, new ones refused, then accepted again.
 */
import net, { type AddressInfo, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Cuts every connection and refuses new ones. */
  down(): Promise<void>;
  /** Accepts connections again, on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const make = () =>
    net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      track(client);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
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
  return {
    port,
    down,
    async up() {
      if (server.listening) return;
      server = make();
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    },
    async close() {
      if (server.listening) await down();
    },
  };
}
