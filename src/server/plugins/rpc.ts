/**
 * Registers Herald's RPC surfaces on Fastify: Connect, gRPC and gRPC-Web on the RPC paths, and
 * the REST shim on the `google.api.http` paths, all from one Connect router and therefore one
 * interceptor chain.
 */

import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CallRequest } from "../call-context.ts";
import { h2UnaryTaker } from "../grpc/h2-unary.ts";
import { createRouter, type UnarySpec } from "../grpc/unary.ts";
import { type AddressedRequest, requestId } from "../options.ts";
import type { PolyglotServer } from "../polyglot.ts";
import { openApiDocument } from "../rest/openapi.ts";
import { registerRestRoutes } from "../rest/shim.ts";

export interface ConnectOptions {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  contextValues: (req: CallRequest) => ContextValues;
  /** The client's address (server/options.ts), for calls answered before Fastify. */
  clientAddress: (req: AddressedRequest) => string | undefined;
  /** Largest accepted RPC message, the same limit as REST bodies. */
  readMaxBytes: number;
  /** Aborts in-flight calls when the server shuts down. */
  shutdownSignal: AbortSignal;
}

/** Registers the RPC surfaces; gives back every unary method's implementation, by path. */
export async function registerConnect(
  app: FastifyInstance,
  opts: ConnectOptions,
): Promise<ReadonlyMap<string, UnarySpec>> {
  // Connect's router, with a faster path for gRPC unary calls (grpc/unary.ts).
  const router = createRouter({
    interceptors: opts.interceptors,
    readMaxBytes: opts.readMaxBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
    shutdownSignal: opts.shutdownSignal,
  });
  opts.routes(router);

  // Unary calls over HTTP/2 are answered on their stream, before Fastify (grpc/h2-unary.ts).
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  (app.server as unknown as PolyglotServer).takeStreams(
    h2UnaryTaker({
      handlers: new Map(
        router.handlers
          .filter((h) => h.method.methodKind === "unary")
          .map((h) => [h.requestPath, h]),
      ),
      contextValues: opts.contextValues,
      clientAddress: opts.clientAddress,
      requestId,
      readMaxBytes: opts.readMaxBytes,
      closing: () => closing,
      log: app.log,
    }),
  );

  await app.register(async (rpc) => {
    // Connect reads the raw body itself, whatever the content type.
    rpc.removeAllContentTypeParsers();
    rpc.addContentTypeParser("*", (_req, _payload, done) => done(null, undefined));
    for (const handler of router.handlers) {
      rpc.post(handler.requestPath, (req, reply) => serve(handler, req, reply, opts));
    }
  });

  await app.register(async (rest) => {
    // POST /v1/notify takes JSON whatever the Content-Type says (or without one).
    rest.removeAllContentTypeParsers();
    rest.addContentTypeParser("*", { parseAs: "string" }, (_req, body, done) => done(null, body));
    registerRestRoutes(rest, router.unary.values(), {
      contextValues: opts.contextValues,
      interceptors: opts.interceptors,
      shutdownSignal: opts.shutdownSignal,
    });
  });

  // The REST routes' OpenAPI description, from the same annotations, built once on first ask.
  let openApi: string | undefined;
  app.get("/v1/openapi.json", async (_req, reply) => {
    openApi ??= JSON.stringify(
      openApiDocument([...new Set(router.handlers.map((h) => h.service))], "v1"),
    );
    return reply
      .type("application/json")
      .header("cache-control", "public, max-age=300")
      .send(openApi);
  });
  return router.unary;
}

/**
 * Answers one RPC with its Connect handler, on the raw Node response: calls over HTTP/1.1, and
 * streaming calls (unary calls over HTTP/2 are answered before Fastify, above).
 */
async function serve(
  handler: UniversalHandler,
  req: FastifyRequest,
  reply: FastifyReply,
  opts: ConnectOptions,
): Promise<void> {
  reply.hijack();
  const uRes = await handler(
    universalRequestFromNodeRequest(req.raw, reply.raw, undefined, opts.contextValues(req)),
  );
  // Fastify's headers (request-id) unless the call answers them itself, in its headers or
  // (a gRPC error) its trailers: a client would otherwise read `req_X, req_X`.
  for (const [k, v] of Object.entries(reply.getHeaders())) {
    if (v !== undefined && !uRes.header?.has(k) && !uRes.trailer?.has(k)) {
      reply.raw.setHeader(k, v);
    }
  }
  try {
    await universalResponseToNodeResponse(uRes, reply.raw);
  } catch (err) {
    // A client that goes away mid-response (a stream it stopped reading) is no error of
    // ours; anything else is logged, since the reply is already ours alone (hijacked).
    if (reply.raw.destroyed || ConnectError.from(err).code === Code.Aborted) {
      req.log.debug({ err }, "client went away during the response");
    } else {
      req.log.error({ err }, "writing the RPC response failed");
    }
  }
}
