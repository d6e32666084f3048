/**
 * The `idempotent-replayed: true` header on an answer that replays an earlier publish, from the
 * use case's typed outcome (NotifyResponse.replayed): clients that read headers, as RPC and REST
 * clients did before the field, see it as before.
 */
import type { Interceptor } from "@connectrpc/connect";

export const replayedHeader = "idempotent-replayed";

export const replayedHeaderInterceptor: Interceptor = (next) => async (req) => {
  const res = await next(req);
  if (!res.stream && (res.message as { replayed?: unknown }).replayed === true)
    res.header.set(replayedHeader, "true");
  return res;
};
