/**
 * Requests to one HTTP/2 origin (APNs, FCM, a Web Push service) over Node's own `http2`
 * sessions: a few connections, each carrying as many streams at once as the server's SETTINGS
 * allow; what finds them all full waits for a stream to end. A connection the server closes
 * or sends GOAWAY on takes no new streams (those on it finish or fail; a failed send is retried
 * by the worker), and the next request opens another.
 *
 * `request` answers the part of undici's `Dispatcher.request` that apns2 calls (a status,
 * headers and a body to read as JSON); `use` lends a session for one stream to a client that
 * opens it itself (firebase-admin's, for FCM). undici's HTTP/2 client spent 130-210 µs of CPU
 * on a request where `http2` itself spends 36-57 µs (measured against a local TLS server, 100
 * at once); a fan-out pays that per iPhone.
 */
import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import type { Duplex } from "node:stream";

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
}

export interface H2Request {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/**
 * The answer, read whole (push services answer a few hundred bytes at most); apns2 reads a
 * refusal's body as JSON.
 */
export interface H2Response {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: { json(): Promise<unknown> };
}

/**
 * A connection and the streams open on it. It is in the pool (`#connections`) until it closes
 * or is told GOAWAY; then it takes no new streams.
 */
interface Connection {
  session: ClientHttp2Session;
  open: number;
  /** The server's SETTINGS arrived: its stream limit is known. */
  ready: boolean;
  /** Settles when the SETTINGS arrive, or fails with the connection (handled: only awaited). */
  settings: Promise<void>;
}

/**
 * Streams at once on one connection: the server's SETTINGS_MAX_CONCURRENT_STREAMS, but no more
 * than 100 (APNs allows up to 1,000; four connections of 100 carry a push account's share of
 * 400 sends in flight, as undici's pool did before).
 */
const streamsPerConnection = 100;
const capacity = (c: Connection) =>
  Math.min(
    c.session.remoteSettings.maxConcurrentStreams ?? streamsPerConnection,
    streamsPerConnection,
  );

/** A stream the server did not process (RST_STREAM REFUSED_STREAM, or past its GOAWAY). */
class RefusedStream extends Error {}
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
    this.#o = { connections: 4, timeoutMs: 10_000, ...opts };
  }

  async request(req: H2Request): Promise<H2Response> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.use((session) => this.#exchange(session, req));
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
  async use<T>(exchange: (session: ClientHttp2Session) => Promise<T>): Promise<T> {
    const c = await this.#connection();
    c.open++;
    try {
      return await exchange(c.session);
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
    const c: Connection = { session, open: 0, ready: false, settings: settled.promise };
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

  #exchange(session: ClientHttp2Session, req: H2Request): Promise<H2Response> {
    return new Promise((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request({ ":method": req.method, ":path": req.path, ...req.headers });
      } catch (err) {
        // The session went away (GOAWAY, closed) since it was chosen: nothing was sent.
        return reject(new RefusedStream((err as Error).message));
      }
      let head: IncomingHttpHeaders | undefined;
      let failure: Error | undefined;
      const chunks: Buffer[] = [];
      stream.setTimeout(this.#o.timeoutMs, () => {
        failure = new Error("the push service did not answer in time");
        stream.close(http2.constants.NGHTTP2_CANCEL);
      });
      stream.on("response", (h) => {
        head = h;
      });
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", (err: Error) => {
        failure ??= err;
      });
      stream.on("close", () => {
        if (head) {
          const text = Buffer.concat(chunks).toString("utf8");
          return resolve({
            statusCode: Number(head[":status"]),
            headers: head,
            body: { json: async () => JSON.parse(text) as unknown },
          });
        }
        if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) {
          return reject(new RefusedStream("the push service refused the stream unprocessed"));
        }
        reject(failure ?? new Error("the push service closed the stream unanswered"));
      });
      stream.end(req.body);
    });
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
