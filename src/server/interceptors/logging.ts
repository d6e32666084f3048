/**
 * Just inside the REST capture, around everything else: one log line per call, and the
 * guarantee that no unexpected error reaches a client with its message. Expected errors (ConnectErrors) pass through unchanged;
 * anything else is logged with its stack and replaced by `internal`, which the client can
 * trace through the request id.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { FastifyBaseLogger } from "fastify";
import { isDatabaseUnavailable } from "../../db/index.ts";
import { heraldError, publicError } from "../../errors.ts";
import type { Metrics } from "../../observability/metrics.ts";
import { principalKey } from "../../services/context.ts";
import { isProtocolService, rpcName } from "../authz.ts";

const notifyRpc = "herald.v1.NotifyService/Notify";

import { requestIdKey, restDecodeKey } from "../context.ts";

function protocolOf(contentType: string | null, rest: boolean): string {
  if (rest) return "rest";
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

export function createLoggingInterceptor(log: FastifyBaseLogger, metrics: Metrics): Interceptor {
  return (next) => async (req) => {
    // A load balancer's health checks would drown the log: they go to debug.
    const level = isProtocolService(req.service) ? "debug" : "info";
    const started = performance.now();
    const requestId = req.contextValues.get(requestIdKey);
    const fields = () => ({
      request_id: requestId,
      rpc: rpcName(req.method),
      protocol: protocolOf(
        req.header.get("content-type"),
        req.contextValues.get(restDecodeKey) !== undefined,
      ),
      credential_id: req.contextValues.get(principalKey)?.credentialId,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
    const count = (code: string) => {
      const f = fields();
      metrics.rpcs.inc({ rpc: f.rpc, protocol: f.protocol, code });
      if (f.rpc !== notifyRpc) return f;
      metrics.publishes.inc({ protocol: f.protocol, code });
      metrics.publishSeconds.observe({ protocol: f.protocol }, f.ms / 1000);
      return f;
    };
    try {
      const res = await next(req);
      res.header.set("request-id", requestId);
      log[level]({ ...count("ok"), code: "ok" }, "rpc");
      return res;
    } catch (err) {
      if (err instanceof ConnectError && publicError(err).code !== "internal") {
        err.metadata.set("request-id", requestId);
        const code = publicError(err).code;
        log[level]({ ...count(code), code }, "rpc");
        throw err;
      }
      // A database that is down (restarting, failing over) is no bug in the request: the call
      // is answered `unavailable` with a Retry-After, which clients retry.
      if (isDatabaseUnavailable(err)) {
        // Its reason, not its stack: an outage fails every call alike.
        const reason = err instanceof Error ? err.message : String(err);
        log.warn({ ...count("unavailable"), code: "unavailable", reason }, "database unavailable");
        throw heraldError("unavailable", "the database is unavailable; retry shortly", {
          retryAfterSeconds: 1,
          metadata: { "request-id": requestId, "retry-after": "1" },
        });
      }
      log.error({ ...count("internal"), code: "internal", err }, "rpc failed");
      throw heraldError("internal", "internal error", {
        metadata: { "request-id": requestId },
      });
    }
  };
}
