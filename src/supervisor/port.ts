/**
 * How the serving processes share the port.
 *
 * Not node:cluster's default (round-robin through the supervisor): the supervisor accepts each
 * connection and passes it to a process, and a process killed between receiving one and saying
 * so leaves that connection open in the supervisor and unread, for good. Measured in the kill run
 * (`npm run soak:kill`): a device's HTTP/2 connection handed to a dying process hung, and every
 * call on it timed out at its deadline for minutes.
 *
 * On Linux each process opens a socket of its own on the port (SO_REUSEPORT): the kernel spreads
 * connections evenly among them, and a process that dies takes its connections with it (its
 * clients see them close and reconnect). Elsewhere the processes accept from one socket the
 * supervisor opens (node:cluster's SCHED_NONE), which has the same property and spreads less
 * evenly.
 */
import cluster from "node:cluster";
import { createServer } from "node:net";

/** True where each process opens its own socket on the port (SO_REUSEPORT). */
export const ownSockets = process.platform === "linux";

/** Before the first fork: where the kernel does not share the port, one socket for all. */
export function shareOneSocket(): void {
  if (!ownSockets) cluster.schedulingPolicy = cluster.SCHED_NONE;
}

/** What a serving process's listen adds (a socket of its own, the port shared by the kernel). */
export const listenOptions = ownSockets ? { reusePort: true, exclusive: true } : {};

/**
 * Why a listener could not open `port` on `host`, said so that a person can act on it, naming
 * the setting (`variable`, or HERALD_HOST for the address); Node's own error otherwise.
 */
export function listenFailure(
  err: NodeJS.ErrnoException,
  host: string,
  port: number,
  variable: string,
) {
  if (err.code === "EADDRINUSE")
    return new Error(`port ${port} on ${host} is in use by another program (${variable})`);
  if (err.code === "EACCES")
    return new Error(
      `port ${port} on ${host} needs a privilege Herald's user lacks (${variable}): a port under 1024 needs CAP_NET_BIND_SERVICE, or use a higher one`,
    );
  if (err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND" || err.code === "EAI_AGAIN")
    return new Error(`${host} is not an address of this machine (HERALD_HOST)`);
  return err;
}

/**
 * The port the processes will serve: `port`, checked to be free, or a free one for 0. A socket of
 * our own would share the port with any other program's SO_REUSEPORT socket (another Herald, for
 * one) without a word, so the supervisor binds it once plainly first: a port in use fails here,
 * with a reason a person can act on, naming the setting (`variable`).
 */
export function claimPort(host: string, port: number, variable = "HERALD_PORT"): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => {
      reject(listenFailure(err, host, port, variable));
    });
    probe.listen({ host, port, exclusive: true }, () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : port));
    });
  });
}
