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
  type DescField,
  type DescMessage,
  fromJson,
  getOption,
  hasOption,
  type JsonObject,
  type JsonValue,
  type Message,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import { ConnectError, type ContextValues, type Interceptor } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import { http } from "../../gen/google/api/annotations_pb.ts";
import type { HttpRule } from "../../gen/google/api/http_pb.ts";
import type { FieldViolation } from "../errors.ts";
import { type RestExchange, restExchangeKey } from "./context.ts";
import { problemFor } from "./problem.ts";

/** The field name used for problems with the request body as a whole. */
export const bodyField = "(body)";

interface Binding {
  verb: HTTPMethods;
  /** Fastify path, e.g. `/v1/notifications/:id`. */
  path: string;
  /** Template variables, each a top-level field of the request. */
  variables: string[];
  body: string;
  responseBody: string;
}

/** Captures the handler's result for the shim, so that it need not re-parse Connect's JSON. */
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

function bindingsOf(rule: HttpRule): Binding[] {
  const out: Binding[] = [];
  for (const r of [rule, ...rule.additionalBindings]) {
    const p = r.pattern;
    if (p.case === undefined) continue;
    const [verb, template] =
      p.case === "custom"
        ? [p.value.kind.toUpperCase(), p.value.path]
        : [p.case.toUpperCase(), p.value];
    const variables: string[] = [];
    const path = template.replace(/\{([a-z0-9_]+)(=[^}]*)?\}/g, (_, name: string) => {
      variables.push(name);
      return `:${name}`;
    });
    if (path.includes("{")) throw new Error(`unsupported path template ${template}`);
    out.push({
      verb: verb as HTTPMethods,
      path,
      variables,
      body: r.body,
      responseBody: r.responseBody,
    });
  }
  return out;
}

const numericScalars = new Set([
  ScalarType.INT32,
  ScalarType.INT64,
  ScalarType.UINT32,
  ScalarType.UINT64,
  ScalarType.SINT32,
  ScalarType.SINT64,
  ScalarType.FIXED32,
  ScalarType.FIXED64,
  ScalarType.SFIXED32,
  ScalarType.SFIXED64,
  ScalarType.FLOAT,
  ScalarType.DOUBLE,
]);

function expected(field: DescField): string {
  if (field.fieldKind === "list") return "must be an array";
  if (field.fieldKind === "map") return "must be a JSON object";
  if (field.fieldKind === "enum") return "must be one of the documented values";
  if (field.fieldKind === "message") {
    if (field.message.typeName === "google.protobuf.Struct") return "must be a JSON object";
    if (field.message.typeName === "google.protobuf.Timestamp")
      return "must be an RFC 3339 timestamp";
    return "must be a JSON object";
  }
  switch (field.scalar) {
    case ScalarType.STRING:
      return "must be a string";
    case ScalarType.BOOL:
      return "must be a boolean";
    case ScalarType.BYTES:
      return "must be base64 bytes";
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return "must be a number";
    default:
      return "must be an integer";
  }
}

/**
 * Decodes what it can of `json` into a message of `schema`, and lists every field it could not
 * take. `strict` (request bodies) refuses numbers sent as strings, which proto JSON tolerates.
 */
export function decodeLeniently(
  schema: DescMessage,
  json: Record<string, unknown>,
  strict: boolean,
  violations: FieldViolation[],
): JsonObject {
  const accepted: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    const field = schema.fields.find((f) => f.name === key || f.jsonName === key);
    if (!field) {
      violations.push({ field: key, message: "is not a field of this request" });
      continue;
    }
    if (field.jsonName in accepted) {
      violations.push({ field: field.name, message: "is given twice" });
      continue;
    }
    const isNumber = field.fieldKind === "scalar" && numericScalars.has(field.scalar);
    if (strict && isNumber && value !== null && typeof value !== "number") {
      violations.push({ field: field.name, message: expected(field) });
      continue;
    }
    try {
      fromJson(schema, { [field.jsonName]: value as JsonValue });
      accepted[field.jsonName] = value as JsonValue;
    } catch {
      violations.push({ field: field.name, message: expected(field) });
    }
  }
  return accepted;
}

/**
 * The REST JSON of a message: snake_case names as in the request, every field present (absent
 * optional ones as null), so clients see one stable shape.
 */
export function restJson(schema: DescMessage, message: Message): JsonValue {
  const json = toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true });
  return complete(schema, json as JsonObject);
}

function complete(schema: DescMessage, json: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const field of schema.fields) {
    const value = json[field.name];
    if (value === undefined || value === null) {
      out[field.name] = null;
    } else if (field.fieldKind === "message" && !field.message.typeName.startsWith("google.")) {
      out[field.name] = complete(field.message, value as JsonObject);
    } else if (field.fieldKind === "list" && field.listKind === "message") {
      const itemSchema = field.message;
      out[field.name] = (value as JsonObject[]).map((v) => complete(itemSchema, v));
    } else {
      out[field.name] = value;
    }
  }
  return out;
}

/** Request headers that describe the REST exchange itself and must not reach the RPC. */
const droppedHeaders = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "accept-encoding",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "host",
]);

/** RPC response headers that a REST client should see. */
const keptResponseHeaders = ["request-id", "idempotent-replayed", "ratelimit", "ratelimit-policy"];

function parseBody(raw: unknown, violations: FieldViolation[]): unknown {
  const text = typeof raw === "string" ? raw : "";
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    violations.push({ field: bodyField, message: `is not valid JSON: ${(e as Error).message}` });
    return undefined;
  }
}

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

async function transcode(
  req: FastifyRequest,
  reply: FastifyReply,
  handler: UniversalHandler,
  binding: Binding,
  opts: RestShimOptions,
): Promise<void> {
  const method = handler.method;
  const input = method.input;
  const violations: FieldViolation[] = [];
  const json: Record<string, unknown> = {};

  if (binding.body !== "") {
    const body = parseBody(req.body, violations);
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
  let accepted = decodeLeniently(input, json, true, violations);
  // Path variables and query parameters are strings by nature: proto JSON's lenient parsing fits.
  const fromUrl: Record<string, unknown> = {};
  const params = req.params as Record<string, string>;
  for (const v of binding.variables) fromUrl[v] = params[v];
  if (binding.body !== "*") {
    for (const [k, v] of Object.entries(req.query as Record<string, string | string[]>)) {
      const field = input.fields.find((f) => f.name === k || f.jsonName === k);
      fromUrl[k] = field?.fieldKind === "list" ? [v].flat() : Array.isArray(v) ? v.at(-1) : v;
    }
  }
  accepted = { ...accepted, ...decodeLeniently(input, fromUrl, false, violations) };

  const exchange: RestExchange = { decodeViolations: violations, headers: new Headers() };
  const contextValues = opts.contextValues(req);
  contextValues.set(restExchangeKey, exchange);
  const header = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined && !droppedHeaders.has(k) && !k.startsWith(":"))
      header.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  header.set("content-type", "application/json");
  header.set("connect-protocol-version", "1");
  const abort = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) abort.abort();
  });

  const uRes = await handler({
    httpVersion: "1.1",
    url: `http://localhost${handler.requestPath}`,
    method: "POST",
    header,
    body: accepted,
    signal: abort.signal,
    contextValues,
  });

  if (exchange.response !== undefined && uRes.status === 200) {
    for (const name of keptResponseHeaders) {
      const value = uRes.header?.get(name);
      if (value) reply.header(name, value);
    }
    for (const [k, v] of exchange.headers) reply.header(k, v);
    let schema: DescMessage = method.output;
    let result: Message = exchange.response;
    if (binding.responseBody !== "") {
      const field = method.output.fields.find((f) => f.name === binding.responseBody);
      if (field?.fieldKind !== "message")
        throw new Error(`bad response_body ${binding.responseBody}`);
      schema = field.message;
      result = (exchange.response as unknown as Record<string, Message>)[
        field.localName
      ] as Message;
    }
    reply.code(exchange.status ?? 200).type("application/json");
    await reply.send(JSON.stringify(restJson(schema, result)));
    return;
  }
  const err = exchange.error ?? (await errorOf(uRes));
  const problem = problemFor(err, req.id);
  reply.code(problem.status).headers(problem.headers).type("application/problem+json");
  await reply.send(JSON.stringify(problem.body));
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
