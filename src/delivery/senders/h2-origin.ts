/**
 * Requests to one HTTP/2 origin (APNs, FCM, a Web Push service) over Node's own `http2`
 * sessions: a few connections, each carrying as many streams at once as the server's SETTINGS
 * allow; what finds them all full waits for a stream to end. A connection the server closes
 * or sends GOAWAY on takes no new streams (those on it finish or fail; a failed send is retried
 * by the worker), and the next request opens another. One that goes silent (a NAT or firewall
 * that forgot it drops its packets without a word, and TCP would take a quarter of an hour to
 * say so) is found by a PING, sent when a request starts on a connection quiet for 30 s and
 * when a request on it times out, and ended when the PING is not answered in 2 s.
 *
 * `request` answers the part of undici's `Dispatcher.request` that apns2 calls (a status,
 * headers and a body to read as JSON); `use` lends a session for one stream to a client that
 * opens it itself (firebase-admin's, for FCM). undici's HTTP/2 client spent 130-210 µs of CPU
 * on a request where `http2` itself spends 36-57 µs (measured against a local TLS server, 100
 * at once); a fan-out pays that per iPhone.
 */
import http2, { type ClientHttp2Session } from "node:http2";
import type { Duplex } from "node:stream";
import {
  type Connection,
  capacity,
  exchange,
  type H2Request,
  type H2Response,
  probe,
  RefusedStream,
} from "./h2-connection.ts";

export interface H2OriginOptions {
  /** Connections at most (default 4). */
  connections?: number;
  /** A stream not answered in this time is cancelled and fails (default 10 s). */
  timeoutMs?: number;
  /** A CA to trust besides the system's (tests, a relay). */
  ca?: string;
  /**
   * Opens a connection's TLS socket in place of `http2.connect`'s own (FCM's: through the
   * agent that also carries its OAuth requests). It must offer h2 by ALPN.
   */
  connect?: () => Duplex;
  /** A connection with no stream for this long is closed (default: kept until the server ends it). */
  idleMs?: number;
  /**
   * A connection heard nothing from for this long is sent a PING as a request starts on it
   * (default 30 s); so is one a request timed out on.
   */
  quietMs?: number;
  /** A PING not answered in this time ends its connection and fails its streams (default 2 s). */
  probeMs?: number;
}

export type { H2Request, H2Response } from "./h2-connection.ts";

/** A refused stream is sent again on another stream this many times at most (RFC 9113 §8.7). */
const refusedRetries = 3;

export class H2Origin {
  readonly #origin: string;
  readonly #o: Required<Omit<H2OriginOptions, "ca" | "connect" | "idleMs">> &
    Pick<H2OriginOptions, "ca" | "connect" | "idleMs">;
  readonly #connections: Connection[] = [];
  /** Requests waiting for a stream. */
  readonly #waiting: (() => void)[] = [];
  #closed = false;

  constructor(origin: string, opts: H2OriginOptions = {}) {
    this.#origin = origin;
    this.#o = { connections: 4, timeoutMs: 10_000, quietMs: 30_000, probeMs: 2_000, ...opts };
  }

  async request(req: H2Request): Promise<H2Response> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#use((c) =>
          exchange(c, req, this.#o.timeoutMs, () =>
            // A slow answer, or a connection gone silent: a PING tells which.
            probe(c, this.#o.probeMs, true, () => this.#wakeAll()),
          ),
        );
      } catch (err) {
        if (!(err instanceof RefusedStream) || attempt >= refusedRetries) throw err;
      }
    }
  }

  /**
   * Runs `exchange` with one stream's room on a connection: it opens its one stream on the
   * session it is given (firebase-admin's HTTP/2 client does, for FCM), and the room is free
   * again when it settles.
   */
  use<T>(exchange: (session: ClientHttp2Session) => Promise<T>): Promise<T> {
    return this.#use((c) => exchange(c.session));
  }

  async #use<T>(exchange: (c: Connection) => Promise<T>): Promise<T> {
    const c = await this.#connection();
    if (performance.now() - c.heardAt >= this.#o.quietMs)
      probe(c, this.#o.probeMs, false, () => this.#wakeAll());
    c.open++;
    try {
      const answered = await exchange(c);
      c.heardAt = performance.now();
      return answered;
    } finally {
      c.open--;
      this.#waiting.shift()?.();
    }
  }

  /**
   * A connection with a free stream: the least busy ready one; a new one when every ready one
   * is at least half full (a fan-out shares a few, a lone push does not open a second); or the
   * first to free a stream. A connection's streams wait for its SETTINGS, so that none is opened
   * past the server's limit; a connection that fails before them fails the requests waiting.
   */
  async #connection(): Promise<Connection> {
    for (;;) {
      if (this.#closed) throw new Error("the connection pool is closed");
      // One pass, nothing allocated: this runs for every push of a fan-out.
      let connecting: Connection | undefined;
      let free: Connection | undefined;
      let halfFull = true;
      for (const c of this.#connections) {
        // Being ended (its close comes a tick later), or under suspicion: no new streams.
        if (c.suspect || c.session.destroyed) continue;
        if (!c.ready) {
          connecting ??= c;
          continue;
        }
        const room = capacity(c);
        if (c.open * 2 < room) halfFull = false;
        if (c.open < room && (!free || c.open < free.open)) free = c;
      }
      if (!connecting && this.#connections.length < this.#o.connections && halfFull) {
        const c = this.#connect();
        if (!free) {
          await c.settings;
          continue;
        }
      }
      if (free) return free;
      if (connecting) await connecting.settings;
      else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #connect(): Connection {
    const { ca, connect } = this.#o;
    const session = http2.connect(this.#origin, {
      ...(ca && { ca }),
      ...(connect && { createConnection: connect }),
    });
    const settled = Promise.withResolvers<void>();
    settled.promise.catch(() => {});
    const c: Connection = {
      session,
      open: 0,
      ready: false,
      settings: settled.promise,
      heardAt: performance.now(),
      probing: false,
      suspect: false,
    };
    // A server that takes the connection and says nothing (a black hole, or no HTTP/2) would
    // hold every request waiting for its SETTINGS: it gets the stream timeout, then is closed.
    const silence = setTimeout(
      () => session.destroy(new Error("the push service sent no HTTP/2 SETTINGS in time")),
      this.#o.timeoutMs,
    );
    silence.unref();
    session.once("remoteSettings", () => {
      clearTimeout(silence);
      c.ready = true;
      settled.resolve();
      this.#wakeAll();
    });
    const retire = (err?: Error) => {
      clearTimeout(silence);
      settled.reject(err ?? new Error("the push service closed the connection"));
      const i = this.#connections.indexOf(c);
      if (i < 0) return;
      this.#connections.splice(i, 1);
      // Waiting requests try another connection, or open one.
      this.#wakeAll();
    };
    session.on("goaway", () => retire());
    session.on("close", () => retire());
    // A failed connection fails its streams (each request sees the error) and its waiters.
    session.on("error", (err: Error) => retire(err));
    if (this.#o.idleMs) session.setTimeout(this.#o.idleMs, () => session.close());
    // Idle connections do not keep the process alive; open streams keep their own sockets busy.
    session.unref();
    this.#connections.push(c);
    return c;
  }

  /** Every waiting request looks again (a connection is ready or gone, or the pool closed). */
  #wakeAll(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** Some connection is open or opening. */
  get connected(): boolean {
    return this.#connections.length > 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wakeAll();
    await Promise.all(
      this.#connections
        .splice(0)
        .map((c) => new Promise<void>((resolve) => c.session.close(() => resolve()))),
    );
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    this.#wakeAll();
    for (const c of this.#connections.splice(0)) c.session.destroy();
  }
}
