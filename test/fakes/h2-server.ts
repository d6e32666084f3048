/**
 * The connections of a fake's HTTP/2 server (with HTTP/1.1 allowed): counted as they open, and
 * ended together when the fake closes (an Http2SecureServer has no closeAllConnections).
 */
import type { Http2SecureServer, Http2Session } from "node:http2";
import type { Server } from "node:https";
import type { Duplex } from "node:stream";

export interface Connections {
  /** HTTP/2 connections opened so far. */
  sessionsOpened(): number;
  /** TLS connections open now, whatever their protocol (or none yet). */
  openConnections(): number;
  /** Stops listening and ends every connection (HTTP/2 sessions and HTTP/1.1 sockets). */
  close(): Promise<void>;
}

export function trackConnections(server: Http2SecureServer | Server): Connections {
  const sessions = new Set<Http2Session>();
  const sockets = new Set<Duplex>();
  let opened = 0;
  server.on("session", (session: Http2Session) => {
    opened++;
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  server.on("secureConnection", (socket: Duplex) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return {
    sessionsOpened: () => opened,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
      }),
  };
}
