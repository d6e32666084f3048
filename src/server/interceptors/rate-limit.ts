/**
 * The token buckets: one per credential, and one per account shared by all of its credentials
 * (so that more keys never buy more requests). Runs after authentication; a public call (sign-up,
 * login steps) spends its client address's credential-sized bucket. Every answer carries
 * `RateLimit-Policy` and `RateLimit` (IETF httpapi draft) for the tighter of the two, and a
 * refusal carries `Retry-After` and a RetryInfo detail, and names the limit it met.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { RateLimiter } from "../../domain/token-bucket.ts";
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
    // The credential's bucket first, then the account's (a request refused by its credential's
    // limit spends nothing of the account's); the tighter of the two is reported.
    let bucket = buckets[0] as Bucket;
    const c = credential.take(
      principal ? principal.credentialId : `addr:${req.contextValues.get(clientAddressKey)}`,
    );
    let r = c instanceof Promise ? await c : c; // the in-process limiter costs no microtask
    if (principal && r.allowed) {
      const t = account.take(`account:${principal.accountId}`);
      const a = t instanceof Promise ? await t : t;
      if (!a.allowed || a.remaining < r.remaining) {
        bucket = buckets[1] as Bucket;
        r = a;
      }
    }
    const ratelimit = `"${bucket.name}";r=${r.remaining};t=${r.allowed ? r.resetSeconds : r.retryAfterSeconds}`;
    if (!r.allowed) {
      const l = bucket.limiter;
      throw heraldError(
        "rate_limited",
        `${bucket.name === "account" ? "the account's" : "this credential's"} rate limit of ${l.burst} requests, refilled at ${l.perSecond}/s, exceeded`,
        {
          retryAfterSeconds: r.retryAfterSeconds,
          metadata: {
            "ratelimit-policy": policy,
            ratelimit,
            "retry-after": String(r.retryAfterSeconds),
          },
        },
      );
    }
    try {
      const res = await next(req);
      res.header.set("ratelimit-policy", policy);
      res.header.set("ratelimit", ratelimit);
      return res;
    } catch (err) {
      if (err instanceof ConnectError) {
        err.metadata.set("ratelimit-policy", policy);
        err.metadata.set("ratelimit", ratelimit);
      }
      throw err;
    }
  };
}
