/**
 * REST transcoding driven by `google.api.http` annotations. Every unary RPC with an annotation
 * gets a Fastify route; a new annotation in the proto needs no route code here.
 *
 * A REST request is transcoded into the request message and given to the very implementation
 * the RPC surfaces serve, through the same interceptors (invoke.ts, as the gRPC handler), so
 * authentication, rate limits, validation and logging run identically; the typed response, or
 * the error as thrown, comes straight back, with no protocol encoding in between. Problems
 * found while decoding (bad JSON, unknown fields, wrong types) are not answered here: they
 * travel in the context and the validation interceptor reports them after authentication,
 * together with the proto's rules.
 */
import {
  type DescMessage,
  fromJson,
  getOption,
  hasOption,
  type JsonObject,
  type Message,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type Interceptor } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { http } from "../../../gen/google/api/annotations_pb.ts";
import type { FieldViolation } from "../../errors.ts";
import { rpcName } from "../authz.ts";
import { callEnded, closeSignal, restDecodeKey, webHeaders } from "../context.ts";
import type { UnarySpec } from "../grpc/unary.ts";
import { unaryContext } from "../handler-context.ts";
import { invokeUnary } from "../invoke.ts";
import { problemFor } from "../problem.ts";
import { type Binding, bindingsOf } from "./bindings.ts";
import { bodyField, decodeLeniently, fieldNamed, parseBody } from "./decode.ts";
import { restJsonText } from "./encode.ts";
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
  interceptors: Interceptor[];
  shutdownSignal: AbortSignal;
}

/** Registers a Fastify route for every `google.api.http` binding of the given unary methods. */
export function registerRestRoutes(
  app: FastifyInstance,
  methods: Iterable<UnarySpec>,
  opts: RestShimOptions,
): void {
  for (const spec of methods) {
    if (!hasOption(spec.method, http)) continue;
    for (const binding of bindingsOf(getOption(spec.method, http))) {
      app.route({
        method: binding.verb,
        url: binding.path,
        handler: (req, reply) => transcode(req, reply, spec, binding, opts),
      });
    }
  }
}

/**
 * The request message from the body, the path and the query, and what did not fit. Throws
 * `invalid_argument` when what did fit is still no message (decoded whole, it clashes).
 */
function requestOf(req: FastifyRequest, spec: UnarySpec, binding: Binding) {
  const input = spec.method.input;
  const violations: FieldViolation[] = [];
  // No prototype: a body's `__proto__` member is then a field like any other (and refused as
  // unknown) instead of silently setting the object's prototype.
  const json: Record<string, unknown> = Object.create(null);
  if (binding.body !== "") {
    const { body, inexact } = parseBody(req.body, violations);
    // A Struct (metadata) is returned as sent: a number it would change is refused, not changed.
    for (const n of inexact) {
      const top = n.path.split(/[.[]/)[0] ?? "";
      const field = fieldNamed(input, top);
      if (field?.fieldKind === "message" && field.message.typeName === "google.protobuf.Struct") {
        violations.push({
          field: n.path,
          message: `the number ${n.source} cannot be kept exactly (JSON numbers are IEEE 754 doubles here); send it as a string`,
        });
      }
    }
    if (binding.body === "*") {
      // No body at all is an empty message, as grpc-gateway reads one (`curl -X POST` to sign a
      // device out, or enable a webhook, has nothing to send); a publish then names `title`.
      if (body !== null && typeof body === "object" && !Array.isArray(body)) {
        Object.assign(json, body);
      } else if (violations.length === 0 && body !== undefined) {
        violations.push({ field: bodyField, message: "must be a JSON object" });
      }
    } else if (body !== undefined) {
      json[binding.body] = body;
    }
  }
  const fromBody = decodeLeniently(input, json, true, violations);
  // Path variables and query parameters are strings by nature: proto JSON's lenient parsing fits.
  const fromUrl: Record<string, unknown> = Object.create(null);
  const params = req.params as Record<string, string>;
  for (const v of binding.variables) fromUrl[v] = params[v];
  if (binding.body !== "*") {
    for (const [k, v] of Object.entries(req.query as Record<string, string | string[]>)) {
      const field = fieldNamed(input, k);
      fromUrl[k] = field?.fieldKind === "list" ? [v].flat() : Array.isArray(v) ? v.at(-1) : v;
    }
  }
  // A request whose URL carries no field (a publish) is the body's message as decoded above:
  // proto JSON is decoded once, not once to check it and again to make the call's input.
  if (Object.keys(fromUrl).length === 0) {
    return { message: fromBody.message ?? requestMessage(spec, fromBody.accepted), violations };
  }
  const url = decodeLeniently(input, fromUrl, false, violations).accepted;
  return { message: requestMessage(spec, { ...fromBody.accepted, ...url }), violations };
}

/** The RPC's request headers: the client's, less those of the REST exchange itself. */
function rpcHeaders(req: FastifyRequest): Headers {
  return webHeaders(req.headers, droppedHeaders, rpcHeadersSet);
}

/** What a REST call's RPC headers say of the call itself. */
const rpcHeadersSet = { "content-type": "application/json", "connect-protocol-version": "1" };

async function transcode(
  req: FastifyRequest,
  reply: FastifyReply,
  spec: UnarySpec,
  binding: Binding,
  opts: RestShimOptions,
): Promise<void> {
  try {
    const { message, violations } = requestOf(req, spec, binding);
    const { output, header } = await callUnary(spec, message, replySignal(reply), {
      ...opts,
      requestHeader: rpcHeaders(req),
      contextValues: opts.contextValues(req).set(restDecodeKey, violations),
    });
    await answer(reply, spec, binding, output, header);
  } catch (err) {
    await answerProblem(req, reply, err);
  }
}

/** A failed call's answer: its problem document. */
export async function answerProblem(req: FastifyRequest, reply: FastifyReply, err: unknown) {
  const problem = problemFor(err, req.id);
  reply.code(problem.status).headers(problem.headers).type("application/problem+json");
  await reply.send(JSON.stringify(problem.body));
}

export interface UnaryCallOptions {
  contextValues: ContextValues;
  requestHeader: Headers;
  interceptors: Interceptor[];
  shutdownSignal: AbortSignal;
}

/** Aborted when the client goes away before its answer is written; made when first asked. */
export function replySignal(reply: FastifyReply): () => AbortSignal {
  return closeSignal(reply.raw, () => !reply.raw.writableFinished);
}

/**
 * Calls a unary RPC's implementation in this process, through the interceptors, for an exchange
 * of our own (a REST route, an inbound hook, a mail): the output and the response headers, or
 * the error as thrown. `signal` aborts it (the client went away).
 */
export async function callUnary(
  spec: UnarySpec,
  input: Message,
  signal: AbortSignal | (() => AbortSignal),
  o: UnaryCallOptions,
): Promise<{ output: Message; header: Headers }> {
  const context = unaryContext({
    service: spec.method.parent,
    method: spec.method,
    requestMethod: "POST",
    protocolName: "rest",
    shutdownSignal: o.shutdownSignal,
    requestSignal: signal,
    requestHeader: o.requestHeader,
    url: `http://localhost/${spec.method.parent.typeName}/${spec.method.name}`,
    contextValues: o.contextValues,
  });
  try {
    const output = await invokeUnary(spec, context, input, o.interceptors);
    return { output, header: context.responseHeader };
  } catch (err) {
    context.abort(err);
    throw err;
  } finally {
    context.abort(callEnded);
  }
}

/** The RPC response headers a REST client should see, on the reply. */
export function keepResponseHeaders(reply: FastifyReply, header: Headers): void {
  for (const name of keptResponseHeaders) {
    const value = header.get(name);
    if (value) reply.header(name, value);
  }
}

/** The request message of the JSON the body, path and query made, as Connect would parse it. */
function requestMessage(spec: UnarySpec, json: JsonObject) {
  try {
    return fromJson(spec.method.input, json);
  } catch (e) {
    throw ConnectError.from(e, Code.InvalidArgument);
  }
}

/** A successful call's REST answer, as its method's first REST binding gives it. */
export async function answerRest(
  reply: FastifyReply,
  spec: UnarySpec,
  response: Message,
  header: Headers,
): Promise<void> {
  const [binding] = bindingsOf(getOption(spec.method, http));
  if (!binding) throw new Error(`${spec.method.name} has no REST binding`);
  await answer(reply, spec, binding, response, header);
}

/** A successful call's REST answer: its status and headers, and the (response_body) JSON. */
async function answer(
  reply: FastifyReply,
  spec: UnarySpec,
  binding: Binding,
  response: Message,
  header: Headers,
): Promise<void> {
  const method = spec.method;
  keepResponseHeaders(reply, header);
  const success = restSuccess(rpcName(method), response);
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
  await reply.send(restJsonText(schema, result));
}
