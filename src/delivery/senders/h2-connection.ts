/**
 * One HTTP/2 connection of an origin's pool (h2-origin.ts): what the pool knows of it, one
 * request's exchange on a stream of it, and the PING that tells a slow server from a connection
 * gone silent.
 */

import type { ClientHttp2Session } from "node:http2";
import http2, { type IncomingHttpHeaders } from "node:http2";

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
export interface Connection {
  session: ClientHttp2Session;
  open: number;
  /** The server's SETTINGS arrived: its stream limit is known. */
  ready: boolean;
  /** Settles when the SETTINGS arrive, or fails with the connection (handled: only awaited). */
  settings: Promise<void>;
  /** When the server was last heard from (an answer, a PING's), by `performance.now()`. */
  heardAt: number;
  /** A PING is out. */
  probing: boolean;
  /** A request on it timed out and its PING is out: it takes no new streams meanwhile. */
  suspect: boolean;
}

/**
 * Streams at once on one connection: the server's SETTINGS_MAX_CONCURRENT_STREAMS, but no more
 * than 100 (APNs allows up to 1,000; four connections of 100 carry a push account's share of
 * 400 sends in flight, as undici's pool did before).
 */
const streamsPerConnection = 100;
export const capacity = (c: Connection) =>
  Math.min(
    c.session.remoteSettings.maxConcurrentStreams ?? streamsPerConnection,
    streamsPerConnection,
  );

/** A stream the server did not process (RST_STREAM REFUSED_STREAM, or past its GOAWAY). */
export class RefusedStream extends Error {}

/**
 * A PING on `c`: answered, the server is there; not answered in `probeMs`, the connection is
 * ended, failing its streams (their sends are retried), and the next request opens another.
 * `suspect`: it takes no new streams until answered; `cleared` is told when it may again.
 */
export function probe(c: Connection, probeMs: number, suspect: boolean, cleared: () => void): void {
  c.suspect ||= suspect;
  if (c.probing) return;
  c.probing = true;
  const silent = setTimeout(() => {
    c.session.destroy(
      new Error(`the push service's connection went silent: no answer to a PING in ${probeMs} ms`),
    );
  }, probeMs);
  silent.unref();
  const answered = (err: Error | null) => {
    clearTimeout(silent);
    c.probing = false;
    if (err) return;
    c.heardAt = performance.now();
    if (c.suspect) {
      c.suspect = false;
      cleared();
    }
  };
  try {
    if (!c.session.ping(answered)) answered(new Error("too many PINGs out"));
  } catch (err) {
    // The session is closing or gone: it is already on its way out of the pool.
    answered(err as Error);
  }
}

/** One request on a new stream of `c`, its answer read whole; `timedOut` when none came in time. */
export function exchange(
  c: Connection,
  req: H2Request,
  timeoutMs: number,
  timedOut: () => void,
): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = c.session.request({ ":method": req.method, ":path": req.path, ...req.headers });
    } catch (err) {
      // The session went away (GOAWAY, closed) since it was chosen: nothing was sent.
      return reject(new RefusedStream((err as Error).message));
    }
    let head: IncomingHttpHeaders | undefined;
    let failure: Error | undefined;
    const chunks: Buffer[] = [];
    stream.setTimeout(timeoutMs, () => {
      failure = new Error("the push service did not answer in time");
      stream.close(http2.constants.NGHTTP2_CANCEL);
      timedOut();
    });
    stream.on("response", (h) => {
      head = h;
      c.heardAt = performance.now();
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
