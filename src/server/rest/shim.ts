/**
 * REST transcoding driven by `google.api.http` annotations. Every unary RPC with an annotation
 * gets a Fastify route; a new annotation in the proto needs no route code here.
 *
 * A REST request is transcoded into a Connect unary call and dispatched to the very handler the
 * RPC surfaces use, so authentication, rate limits, validation and logging run identically.
 * Problems found while decoding (bad JSON, unknown fields, wrong types) are not answered here:
 * they travel in the context and the validation interceptor reports them after authentication,
 * together with the proto's rules.
 */
import {
  type DescMessage,
  getOption,
  hasOption,
  type JsonObject,
  type Message,
} from "@bufbuild/protobuf";
import { ConnectError, type ContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { http } from "../../../gen/google/api/annotations_pb.ts";
import type { FieldViolation } from "../../errors.ts";
import { rpcName } from "../authz.ts";
import { type RestExchange, restExchangeKey } from "../context.ts";
import { problemFor } from "../problem.ts";
import { type Binding, bindingsOf } from "./bindings.ts";
import { bodyField, decodeLeniently, parseBody } from "./decode.ts";
import { restJson } from "./encode.ts";
import { restSuccess } from "./status.ts";

/**
 * Request headers that describe the REST exchange itself and must not reach the RPC. (`Host`
 * does: links the server hands out, such as a device login's verification_uri, are built on it.)
 */
const droppedHeaders = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "accept-encoding",
  "connection",
  "keep-alive",
  "transfer-encoding",
]);

/** RPC response headers that a REST client should see. */
const keptResponseHeaders = [
  "request-id",
  "idempotent-replayed",
  "ratelimit",
  "ratelimit-policy",
  "set-cookie",
];

export interface RestShimOptions {
  contextValues: (req: FastifyRequest) => ContextValues;
}

/** Registers a Fastify route for every `google.api.http` binding of the given handlers. */
export function registerRestRoutes(
  app: FastifyInstance,
  handlers: readonly UniversalHandler[],
  opts: RestShimOptions,
): void {
  for (const handler of handlers) {
    const method = handler.method;
    if (method.methodKind !== "unary" || !hasOption(method, http)) continue;
    for (const binding of bindingsOf(getOption(method, http))) {
      app.route({
        method: binding.verb,
        url: binding.path,
        handler: (req, reply) => transcode(req, reply, handler, binding, opts),
      });
    }
  }
}

/** The request message's JSON from the body, the path and the query, and what did not fit. */
function requestJson(req: FastifyRequest, input: DescMessage, binding: Binding) {
  const violations: FieldViolation[] = [];
  // No prototype: a body's `__proto__` member is then a field like any other (and refused as
  // unknown) instead of silently setting the object's prototype.
  const json: Record<string, unknown> = Object.create(null);
  if (binding.body !== "") {
    const { body, inexact } = parseBody(req.body, violations);
    // A Struct (metadata) is returned as sent: a number it would change is refused, not changed.
    for (const n of inexact) {
      const top = n.path.split(/[.[]/)[0];
      const field = input.fields.find((f) => f.name === top || f.jsonName === top);
      if (field?.fieldKind === "message" && field.message.typeName === "google.protobuf.Struct") {
        violations.push({
          field: n.path,
          message: `the number ${n.source} cannot be kept exactly (JSON numbers are IEEE 754 doubles here); send it as a string`,
        });
      }
    }
    if (binding.body === "*") {
      if (body !== null && typeof body === "object" && !Array.isArray(body)) {
        Object.assign(json, body);
      } else if (violations.length === 0) {
        violations.push({ field: bodyField, message: "must be a JSON object" });
      }
    } else if (body !== undefined) {
      json[binding.body] = body;
    }
  }
  const accepted = decodeLeniently(input, json, true, violations);
  // Path variables and query parameters are strings by nature: proto JSON's lenient parsing fits.
  const fromUrl: Record<string, unknown> = Object.create(null);
  const params = req.params as Record<string, string>;
  for (const v of binding.variables) fromUrl[v] = params[v];
  if (binding.body !== "*") {
    for (const [k, v] of Object.entries(req.query as Record<string, string | string[]>)) {
      const field = input.fields.find((f) => f.name === k || f.jsonName === k);
      fromUrl[k] = field?.fieldKind === "list" ? [v].flat() : Array.isArray(v) ? v.at(-1) : v;
    }
  }
  const all: JsonObject = { ...accepted, ...decodeLeniently(input, fromUrl, false, violations) };
  return { json: all, violations };
}

/** The RPC's request headers: the client's, less those of the REST exchange itself. */
function rpcHeaders(req: FastifyRequest): Headers {
  const header = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined && !droppedHeaders.has(k) && !k.startsWith(":"))
      header.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  header.set("content-type", "application/json");
  header.set("connect-protocol-version", "1");
  return header;
}

async function transcode(
  req: FastifyRequest,
  reply: FastifyReply,
  handler: UniversalHandler,
  binding: Binding,
  opts: RestShimOptions,
): Promise<void> {
  const { json, violations } = requestJson(req, handler.method.input, binding);
  const exchange: RestExchange = { decodeViolations: violations };
  const contextValues = opts.contextValues(req);
  contextValues.set(restExchangeKey, exchange);
  const abort = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const uRes = await handler({
    httpVersion: "1.1",
    url: `http://localhost${handler.requestPath}`,
    method: "POST",
    header: rpcHeaders(req),
    body: json,
    signal: abort.signal,
    contextValues,
  });
  if (exchange.response !== undefined && uRes.status === 200) {
    await answer(reply, handler, binding, exchange.response, uRes.header);
    return;
  }
  const problem = problemFor(exchange.error ?? (await errorOf(uRes)), req.id);
  reply.code(problem.status).headers(problem.headers).type("application/problem+json");
  await reply.send(JSON.stringify(problem.body));
}

/** A successful call's REST answer: its status and headers, and the (response_body) JSON. */
async function answer(
  reply: FastifyReply,
  handler: UniversalHandler,
  binding: Binding,
  response: Message,
  header: Headers | undefined,
): Promise<void> {
  const method = handler.method;
  for (const name of keptResponseHeaders) {
    const value = header?.get(name);
    if (value) reply.header(name, value);
  }
  const success = restSuccess(rpcName(method), response, header);
  if (success.location) reply.header("location", success.location);
  let schema: DescMessage = method.output;
  let result: Message = response;
  if (binding.responseBody !== "") {
    const field = method.output.fields.find((f) => f.name === binding.responseBody);
    if (field?.fieldKind !== "message")
      throw new Error(`bad response_body ${binding.responseBody}`);
    schema = field.message;
    result = (response as unknown as Record<string, Message>)[field.localName] as Message;
  }
  reply.code(success.status).type("application/json");
  await reply.send(JSON.stringify(restJson(schema, result)));
}

async function errorOf(uRes: {
  status: number;
  header?: Headers;
  body?: AsyncIterable<Uint8Array>;
}) {
  const chunks: Uint8Array[] = [];
  if (uRes.body) for await (const c of uRes.body) chunks.push(c);
  const fallback = new ConnectError(`HTTP ${uRes.status}`);
  try {
    return errorFromJsonBytes(Buffer.concat(chunks), uRes.header, fallback);
  } catch {
    return fallback;
  }
}
