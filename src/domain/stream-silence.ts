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
