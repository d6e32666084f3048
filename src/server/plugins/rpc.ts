/**
 * Registers Herald's RPC surfaces on Fastify: Connect, gRPC and gRPC-Web on the RPC paths, and
 * the REST shim on the `google.api.http` paths, all from one Connect router and therefore one
 * interceptor chain.
 */

import type { OutgoingHttpHeaders } from "node:http2";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CallRequest } from "../call-context.ts";
import { callEnded, closeSignal, webHeaders } from "../context.ts";
import { h2UnaryTaker } from "../grpc/h2-unary.ts";
import { createRouter } from "../grpc/router.ts";
import type { UnarySpec } from "../grpc/unary.ts";
import { WholeBody } from "../grpc/whole-body.ts";
import { bodyOf, bytesOf, nodeHeaders, WholeRequest } from "../grpc/whole-call.ts";
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
      const answer = handler.method.methodKind === "unary" ? serveWhole : serve;
      // POST, and GET for a method without side effects (Connect's GET, as over HTTP/2).
      for (const method of handler.allowedMethods) {
        rpc.route({
          method,
          url: handler.requestPath,
          exposeHeadRoute: false,
          handler: (req, reply) => answer(handler, req, reply, opts),
        });
      }
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

/** Fastify's headers (request-id) unless the call answers them itself. */
function fastifyHeaders(reply: FastifyReply, uRes: UniversalServerResponse): OutgoingHttpHeaders {
  // In its headers or (a gRPC error) its trailers: a client would otherwise read `req_X, req_X`.
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) {
    if (v !== undefined && !uRes.header?.has(k) && !uRes.trailer?.has(k)) out[k] = v;
  }
  return out;
}

/** Answers one RPC with its handler on Fastify's request, the reply hijacked. */
type Serve = (
  handler: UniversalHandler,
  req: FastifyRequest,
  reply: FastifyReply,
  opts: ConnectOptions,
) => Promise<void>;

/** The same, set on the raw response itself (Connect-node's adapter writes the answer). */
function setFastifyHeaders(reply: FastifyReply, uRes: UniversalServerResponse): void {
  for (const [k, v] of Object.entries(fastifyHeaders(reply, uRes))) {
    reply.raw.setHeader(k, v as string);
  }
}

/**
 * A unary call over HTTP/1.1 (Connect's protocol, the SDK's default; gRPC-Web), its body read
 * and its answer written whole (grpc/whole-call.ts): through Connect-node's adapters it cost
 * the server 243-286 µs of CPU a Connect publish against REST's 154-204; with Connect-protocol unary
 * POSTs served by grpc/connect-unary.ts, 137-192 µs, as REST (BENCHMARKS.md, thirtieth session).
 */
const serveWhole: Serve = async (handler, req, reply, opts) => {
  reply.hijack();
  const raw = reply.raw;
  const exchange = {
    httpVersion: req.raw.httpVersion,
    method: req.method,
    url: `http://${req.headers.host ?? "localhost"}${req.url}`,
    header: webHeaders(req.headers),
  };
  // Some bytes past the limit, so that the handler sees a message too large as one.
  const body = bodyOf(req.raw, opts.readMaxBytes + 6);
  const signal = closeSignal(raw, () => true, callEnded);
  const uRes = await handler(new WholeRequest(exchange, body, opts.contextValues(req), signal));
  const bytes = await bytesOf(uRes.body);
  if (raw.destroyed) return;
  if (uRes.trailer?.keys().next().done === false) {
    // gRPC over HTTP/1.1 answers its status in trailers (chunked): Connect-node writes them.
    setFastifyHeaders(reply, uRes);
    return universalResponseToNodeResponse({ ...uRes, body: new WholeBody(bytes) }, raw);
  }
  const head = nodeHeaders(uRes.header, fastifyHeaders(reply, uRes));
  raw.writeHead(uRes.status, head);
  raw.end(bytes);
};

/**
 * Answers one streaming RPC with its Connect handler, on the raw Node response (unary calls
 * are answered whole, above and over HTTP/2 before Fastify).
 */
const serve: Serve = async (handler, req, reply, opts) => {
  reply.hijack();
  const uRes = await handler(
    universalRequestFromNodeRequest(req.raw, reply.raw, undefined, opts.contextValues(req)),
  );
  setFastifyHeaders(reply, uRes);
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
};
