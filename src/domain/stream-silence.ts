/**
 * How long a live stream may stay silent. A server sends a keepalive at least this often
 * (HERALD_STREAM_KEEPALIVE_MS, at most `maxKeepaliveMs`) and says its interval in each one; a
 * client that hears nothing for `deadAfterMs` of it takes the stream for dead: a connection a
 * network dropped without closing it says nothing, for good.
 */
export const maxKeepaliveMs = 30_000;

/** Silence after which a stream with this keepalive interval is taken for dead. */
export function deadAfterMs(keepaliveMs: number): number {
  return 2 * keepaliveMs + 5_000;
}

/**
 * Watches a client's successive streams of one kind for silence. A stream that a network dropped
 * without closing it (a laptop's sleep, a changed network, a NAT that forgot it) says nothing,
 * for good. Messages say how long their server stays silent at most (`intervalOf`, in ms); a
 * stream not heard from for `deadAfterMs` of that is taken for dead. Until one says, the last
 * interval heard on an earlier stream is assumed (a stream opened again on a connection as dead
 * waits that long, not the server's bound), and before any, the server's bound.
 */
export function silenceWatch<T>(intervalOf: (msg: T) => number | undefined) {
  let limitMs = deadAfterMs(maxKeepaliveMs);
  /**
   * The stream's messages while its server is heard from. When it is not, `silent` is told why,
   * once, and aborts the call, which ends this iteration with the call's error. Only the wait for
   * the next message counts: the time the client spends on one (a command it runs, a prompt) is
   * not the server's silence.
   */
  return async function* heardFrom(
    stream: AsyncIterable<T>,
    silent: (why: string) => void,
  ): AsyncGenerator<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      const s = Math.round(limitMs / 100) / 10;
      timer = setTimeout(() => silent(`the server said nothing for ${s} s`), limitMs);
    };
    try {
      arm();
      for await (const msg of stream) {
        clearTimeout(timer);
        const ms = intervalOf(msg);
        if (ms) limitMs = deadAfterMs(ms);
        yield msg;
        arm();
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
