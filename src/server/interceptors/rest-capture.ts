/**
 * The outermost interceptor: captures a REST call's result for the shim, so that it need not
 * re-parse Connect's JSON, and the error exactly as the call ended with it. RPC calls pass
 * through untouched.
 */
import type { Interceptor } from "@connectrpc/connect";
import { restExchangeKey } from "../context.ts";

export const restCaptureInterceptor: Interceptor = (next) => async (req) => {
  const exchange = req.contextValues.get(restExchangeKey);
  if (!exchange) return next(req);
  try {
    const res = await next(req);
    if (!res.stream) exchange.response = res.message;
    return res;
  } catch (err) {
    exchange.error = err;
    throw err;
  }
};
