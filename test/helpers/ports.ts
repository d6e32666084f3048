/** A TCP port of 127.0.0.1 free now, for a program that takes an address, not port 0. */
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
