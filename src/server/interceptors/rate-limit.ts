/**
 * The token buckets: one per credential, and one per account shared by all of its credentials
 * (so that more keys never buy more requests). Runs after authentication; a public call (sign-up,
 * login steps) spends its client address's credential-sized bucket. Every answer carries
 * `RateLimit-Policy` and `RateLimit` (IETF httpapi draft) for the tighter of the two, and a
 * refusal carries `Retry-After` and a RetryInfo detail, and names the limit it met.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { RateLimiter, TakeResult } from "../../domain/token-bucket.ts";
import { heraldError } from "../../errors.ts";
import { clientAddressKey, principalKey } from "../../services/context.ts";
import { isProtocolService } from "../authz.ts";

interface Bucket {
  name: "credential" | "account";
  limiter: RateLimiter;
}

const windowOf = (l: RateLimiter) => Math.ceil(l.burst / l.perSecond);

export function createRateLimitInterceptor(
  credential: RateLimiter,
  account: RateLimiter,
): Interceptor {
  const buckets: Bucket[] = [
    { name: "credential", limiter: credential },
    { name: "account", limiter: account },
  ];
  const policy = buckets
    .map((b) => `"${b.name}";q=${b.limiter.burst};w=${windowOf(b.limiter)}`)
    .join(", ");
  return (next) => async (req) => {
    // The gRPC protocol's health and reflection are as free as GET /readyz.
    if (isProtocolService(req.service)) return next(req);
    const principal = req.contextValues.get(principalKey);
    const keys = principal
      ? [principal.credentialId, `account:${principal.accountId}`]
      : [`addr:${req.contextValues.get(clientAddressKey)}`];
    // The credential's bucket first, then the account's: a request refused by its credential's
    // limit spends nothing of the account's.
    let tightest: { bucket: Bucket; r: TakeResult } | undefined;
    for (const [i, key] of keys.entries()) {
      const bucket = buckets[i] as Bucket;
      const r = await bucket.limiter.take(key);
      if (!tightest || !r.allowed || r.remaining < tightest.r.remaining) tightest = { bucket, r };
      if (!r.allowed) break;
    }
    const { bucket, r } = tightest as { bucket: Bucket; r: TakeResult };
    const headers = {
      "ratelimit-policy": policy,
      ratelimit: `"${bucket.name}";r=${r.remaining};t=${r.allowed ? r.resetSeconds : r.retryAfterSeconds}`,
    };
    if (!r.allowed) {
      const l = bucket.limiter;
      throw heraldError(
        "rate_limited",
        `${bucket.name === "account" ? "the account's" : "this credential's"} rate limit of ${l.burst} requests, refilled at ${l.perSecond}/s, exceeded`,
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
