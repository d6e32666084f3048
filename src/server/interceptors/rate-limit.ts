/**
 * The per-credential token bucket. Runs after authentication (an unauthenticated caller has no
 * bucket). Every answer carries `RateLimit-Policy` and `RateLimit` (IETF httpapi draft), and a
 * refusal carries `Retry-After` and a RetryInfo detail.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { RateLimiter } from "../../domain/token-bucket.ts";
import { heraldError } from "../../errors.ts";
import { clientAddressKey, principalKey } from "../../services/context.ts";
import { isProtocolService } from "../authz.ts";

export function createRateLimitInterceptor(limiter: RateLimiter): Interceptor {
  const window = Math.ceil(limiter.burst / limiter.perSecond);
  const policy = `"credential";q=${limiter.burst};w=${window}`;
  return (next) => async (req) => {
    // The gRPC protocol's health and reflection are as free as GET /readyz.
    if (isProtocolService(req.service)) return next(req);
    // Authenticated calls spend their credential's tokens; public ones (sign-up, login steps)
    // their client address's.
    const principal = req.contextValues.get(principalKey);
    const r = await limiter.take(
      principal ? principal.credentialId : `addr:${req.contextValues.get(clientAddressKey)}`,
    );
    const headers = {
      "ratelimit-policy": policy,
      ratelimit: `"credential";r=${r.remaining};t=${r.allowed ? r.resetSeconds : r.retryAfterSeconds}`,
    };
    if (!r.allowed) {
      throw heraldError(
        "rate_limited",
        `rate limit of ${limiter.burst} requests, refilled at ${limiter.perSecond}/s, exceeded`,
        {
          retryAfterSeconds: r.retryAfterSeconds,
          metadata: { ...headers, "retry-after": String(r.retryAfterSeconds) },
        },
      );
    }
    try {
      const res = await next(req);
      for (const [k, v] of Object.entries(headers)) res.header.set(k, v);
      return res;
    } catch (err) {
      if (err instanceof ConnectError)
        for (const [k, v] of Object.entries(headers)) err.metadata.set(k, v);
      throw err;
    }
  };
}
