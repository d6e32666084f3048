/**
 * Fastify's options for Herald: one port for HTTP/1.1 and h2c, request ids, body limit, the
 * proxies whose X-Forwarded-For counts, and no per-request log (the logging interceptor logs
 * one line per call instead).
 */
import type { IncomingHttpHeaders, IncomingMessage, Server } from "node:http";
import proxyAddr from "@fastify/proxy-addr";
import { type FastifyServerFactory, type FastifyServerOptions, LogController } from "fastify";
import type { Config } from "../config.ts";
import { pooledRandom } from "../domain/random.ts";
import { createPolyglotServer, type Handler } from "./polyglot.ts";

/** Request ids: 72 random bits each, from the pool (domain/random.ts). */
export function requestId(): string {
  return `req_${pooledRandom(9).toString("base64url")}`;
}

/**
 * Herald's routes declare no JSON Schema (protobuf descriptors and protovalidate check every
 * call), so Fastify's schema compilers (Ajv, fast-json-stringify: hundreds of modules in every
 * process) are never loaded. A route that declared one would fail to register, saying why.
 */
function noSchemaCompiler(): never {
  throw new Error("Herald's routes declare no JSON Schema: describe the message in proto/ instead");
}
const schemaController = {
  compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler },
};

type Trust = (address: string, hop: number) => boolean;

/**
 * Which peers' X-Forwarded-For counts (HERALD_TRUST_PROXY): the proxies it names, or a hop count
 * (that many proxies nearest to us, what proxy-addr does for a number); undefined trusts none.
 */
function proxyTrust(trust: Config["trustProxy"]): Trust | undefined {
  if (trust === false) return undefined;
  if (typeof trust === "number") return (_address, hop) => hop < trust;
  return proxyAddr.compile(trust.split(",").map((a) => a.trim()));
}

/** A request as far as its client's address goes. */
export interface AddressedRequest {
  socket: { remoteAddress?: string | undefined };
  headers: IncomingHttpHeaders;
}

/**
 * The client's address: the peer's, or behind trusted proxies the address they forwarded. The
 * one rule for Fastify's `req.ip` and for calls answered before Fastify (grpc/h2-unary.ts).
 */
export function clientAddressOf(
  trust: Config["trustProxy"],
): (req: AddressedRequest) => string | undefined {
  const fn = proxyTrust(trust);
  if (!fn) return (req) => req.socket.remoteAddress;
  return (req) => proxyAddr(req as IncomingMessage, fn);
}

export function serverOptions(
  config: Config,
  logger: FastifyServerOptions["logger"] | undefined,
  loggerInstance?: FastifyServerOptions["loggerInstance"],
): FastifyServerOptions {
  return {
    ...(loggerInstance ? { loggerInstance } : { logger: logger ?? { level: config.logLevel } }),
    // One port, HTTP/1.1 and h2c. Fastify's types know one server kind at a time; both kinds of
    // request reach the same handler, which Fastify and Connect support.
    serverFactory: ((handler: Handler) =>
      createPolyglotServer(handler, {
        keepAliveTimeoutMs: config.keepAliveMs,
      }) as unknown as Server) as unknown as FastifyServerFactory,
    bodyLimit: config.bodyLimitBytes,
    genReqId: requestId,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: "idle",
    trustProxy: proxyTrust(config.trustProxy) ?? false,
    return503OnClosing: true,
    schemaController,
  };
}
