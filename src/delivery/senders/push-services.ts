/**
 * The connections to Web Push services, by origin. A service that offers HTTP/2 in ALPN (Google's
 * `fcm.googleapis.com` does) gets a fan-out's pushes as streams of a few connections
 * (h2-origin.ts): the benchmark's fan-out to 3,000 browsers settled ~9 % sooner than over
 * undici's HTTP/1.1 (BENCHMARKS.md, twenty-first session). One that does not gets HTTP/1.1
 * through undici's pool, as before. Which it speaks is learned from a TLS handshake offering
 * both, whose socket then carries the first connection, and asked again when that handshake
 * fails, or when a send fails with no HTTP/2 connection left.
 * Every connection resolves its name with the caller's `lookup` (public addresses only, unless
 * private ones are allowed: push-address.ts).
 */
import type { IncomingHttpHeaders } from "node:http";
import { isIP, type LookupFunction } from "node:net";
import tls from "node:tls";
import { Agent } from "undici";
import { H2Origin } from "./h2-origin.ts";
import { providerSocketsPerOrigin } from "./sender.ts";

export interface PushServicesOptions {
  /** A CA to trust besides the system's (a test's push service). */
  ca?: string;
  /** Name resolution for every connection (push-address.ts' `publicOnlyLookup`). */
  lookup?: LookupFunction;
  /** A request (or a handshake) not answered in this time fails. */
  timeoutMs: number;
}

export interface PushRequestParts {
  headers: Record<string, string>;
  body: Buffer;
}

export interface PushAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
}

/** An idle HTTP/2 connection to a push service is closed after this, as undici's were. */
const idleMs = 60_000;

/**
 * The HTTP/1.1 connections to push services without HTTP/2: kept alive between fan-outs (undici
 * would close an idle one after 4 s), at most `providerSocketsPerOrigin` to one service.
 */
function http1Pool(o: PushServicesOptions): Agent {
  return new Agent({
    connections: providerSocketsPerOrigin,
    keepAliveTimeout: idleMs,
    keepAliveMaxTimeout: 10 * idleMs,
    connect: { ...(o.ca && { ca: o.ca }), ...(o.lookup && { lookup: o.lookup }) },
  });
}

export class PushServices {
  readonly #o: PushServicesOptions;
  readonly #http1: Agent;
  /** By origin: its HTTP/2 connections, or undefined for HTTP/1.1 (settled once asked). */
  readonly #origins = new Map<string, Promise<H2Origin | undefined>>();
  #closed = false;

  constructor(o: PushServicesOptions) {
    this.#o = o;
    this.#http1 = http1Pool(o);
  }

  /** POSTs to the URL; resolves with the answer's status and headers (the body is dropped). */
  async post(url: URL, req: PushRequestParts): Promise<PushAnswer> {
    if (this.#closed) throw new Error("the connections to push services are closed");
    const asked = this.#of(url);
    const h2 = await asked;
    if (h2) {
      try {
        const res = await h2.request({
          path: url.pathname + url.search,
          method: "POST",
          headers: req.headers,
          body: req.body,
        });
        return { statusCode: res.statusCode, headers: res.headers };
      } catch (err) {
        // No connection left (refused, or no HTTP/2 any more): asked again at the next send.
        if (!h2.connected && this.#origins.get(url.origin) === asked) {
          this.#origins.delete(url.origin);
        }
        throw err;
      }
    }
    const res = await this.#http1.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: "POST",
      headersTimeout: this.#o.timeoutMs,
      bodyTimeout: this.#o.timeoutMs,
      headers: req.headers,
      body: req.body,
    });
    await res.body.dump();
    return { statusCode: res.statusCode, headers: res.headers as IncomingHttpHeaders };
  }

  /** The origin's HTTP/2 connections, asking it first; a handshake that fails is asked again. */
  #of(url: URL): Promise<H2Origin | undefined> {
    let known = this.#origins.get(url.origin);
    if (!known) {
      known = this.#ask(url);
      this.#origins.set(url.origin, known);
      known.catch(() => this.#origins.delete(url.origin));
    }
    return known;
  }

  #socket(url: URL, protocols: string[]): tls.TLSSocket {
    const { ca, lookup } = this.#o;
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return tls.connect({
      host,
      port: Number(url.port || 443),
      // SNI takes a name, not an address.
      ...(isIP(host) ? {} : { servername: host }),
      ALPNProtocols: protocols,
      ...(ca && { ca }),
      ...(lookup && { lookup }),
    });
  }

  async #ask(url: URL): Promise<H2Origin | undefined> {
    const socket = this.#socket(url, ["h2", "http/1.1"]);
    const timer = setTimeout(
      () => socket.destroy(new Error("the push service did not complete TLS in time")),
      this.#o.timeoutMs,
    );
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("secureConnect", resolve);
        socket.once("error", reject);
      });
    } finally {
      clearTimeout(timer);
    }
    if (socket.alpnProtocol !== "h2") {
      socket.destroy();
      return undefined;
    }
    let first: tls.TLSSocket | undefined = socket;
    return new H2Origin(url.origin, {
      timeoutMs: this.#o.timeoutMs,
      idleMs,
      connect: () => {
        const s = first && !first.destroyed ? first : this.#socket(url, ["h2"]);
        first = undefined;
        return s;
      },
    });
  }

  /**
   * Ends every connection, and refuses sends from then on (a send after it would open a
   * connection nothing closes). An origin being asked is waited for: the send that asked it has
   * taken its handshake's socket as its first connection by then.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const origins = await Promise.allSettled(this.#origins.values());
    this.#origins.clear();
    for (const o of origins) if (o.status === "fulfilled") await o.value?.destroy();
    await this.#http1.destroy();
  }
}
