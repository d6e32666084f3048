/**
 * An OpenAPI 3.1 description of the REST shim, built from the very `google.api.http` annotations
 * the shim routes by (bindings.ts) and the messages' descriptors, so that it cannot drift from
 * the routes. Served at `GET /v1/openapi.json`. Schemas follow what the shim accepts and answers:
 * snake_case names, int64 as strings, every response field present (absent ones null), errors as
 * RFC 9457 problems.
 */
import type { DescField, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.ts";
import { isPublic, matrix, rpcName } from "../authz.ts";
import { type Binding, bindingsOf } from "./bindings.ts";
import { successStatus } from "./status.ts";

type Schema = Record<string, unknown>;

const scalarSchemas: Record<number, Schema> = {
  1: { type: "number", format: "double" },
  2: { type: "number", format: "float" },
  3: { type: "string", format: "int64" },
  4: { type: "string", format: "uint64" },
  5: { type: "integer", format: "int32" },
  6: { type: "string", format: "uint64" },
  7: { type: "integer", format: "uint32" },
  8: { type: "boolean" },
  9: { type: "string" },
  12: { type: "string", contentEncoding: "base64" },
  13: { type: "integer", format: "uint32" },
  15: { type: "integer", format: "int32" },
  16: { type: "string", format: "int64" },
  17: { type: "integer", format: "int32" },
  18: { type: "string", format: "int64" },
};

/** Well-known types in their proto JSON form. */
const wellKnown: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$" },
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.Empty": { type: "object" },
};

const problem: Schema = {
  type: "object",
  description: "RFC 9457 problem details; `code` is the stable catalogue code (docs/api.md).",
  required: ["type", "title", "status", "detail", "code", "request_id"],
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string" },
    errors: {
      type: "array",
      items: {
        type: "object",
        properties: { field: { type: "string" }, message: { type: "string" } },
      },
    },
    request_id: { type: "string" },
  },
};

class Components {
  readonly schemas: Record<string, Schema> = { Problem: problem };

  ref(message: DescMessage): Schema {
    const known = wellKnown[message.typeName];
    if (known) return known;
    if (!(message.typeName in this.schemas)) {
      this.schemas[message.typeName] = {}; // placeholder: messages may refer to themselves
      this.schemas[message.typeName] = this.message(message);
    }
    return { $ref: `#/components/schemas/${message.typeName}` };
  }

  private message(message: DescMessage): Schema {
    const properties: Record<string, Schema> = {};
    for (const f of message.fields) properties[f.name] = this.field(f);
    return { type: "object", properties, additionalProperties: false };
  }

  field(f: DescField): Schema {
    switch (f.fieldKind) {
      case "scalar":
        return scalarSchemas[f.scalar] ?? {};
      case "enum":
        return { type: "string", enum: f.enum.values.map((v) => v.name) };
      case "message":
        return { anyOf: [this.ref(f.message), { type: "null" }] };
      case "list":
        return {
          type: "array",
          items:
            f.listKind === "message"
              ? this.ref(f.message)
              : f.listKind === "enum"
                ? { type: "string", enum: f.enum.values.map((v) => v.name) }
                : (scalarSchemas[f.scalar] ?? {}),
        };
      case "map":
        return {
          type: "object",
          additionalProperties:
            f.mapKind === "message"
              ? this.ref(f.message)
              : (scalarSchemas[f.scalar as number] ?? {}),
        };
    }
  }
}

/** The OpenAPI document for the REST routes of `services`. */
export function openApiDocument(services: readonly DescService[], version: string): Schema {
  const components = new Components();
  const paths: Record<string, Record<string, Schema>> = {};
  for (const service of services) {
    for (const method of service.methods) {
      if (method.methodKind !== "unary" || !hasOption(method, http)) continue;
      for (const b of bindingsOf(getOption(method, http))) {
        const path = b.path.replace(/:([a-z0-9_]+)/g, "{$1}");
        paths[path] ??= {};
        (paths[path] as Record<string, Schema>)[b.verb.toLowerCase()] = operation(
          components,
          method,
          b,
        );
      }
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Herald REST API",
      version,
      description: "Generated from the google.api.http annotations in proto/. See docs/api.md.",
    },
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "A project API key (hk_…) or a CLI token (hc_…).",
        },
      },
    },
  };
}

function operation(components: Components, method: DescMethod, b: Binding): Schema {
  const rpc = rpcName(method);
  const fields = method.input.fields.filter((f) => !b.variables.includes(f.name));
  const parameters: Schema[] = b.variables.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  if (b.body === "") {
    for (const f of fields.filter((f) => f.fieldKind === "scalar" || f.fieldKind === "enum")) {
      parameters.push({ name: f.name, in: "query", schema: components.field(f) });
    }
  }
  const publishes = rpc === "herald.v1.NotifyService/Notify";
  if (publishes) parameters.push(...notifyHeaders);
  const bodyField = method.input.fields.find((f) => f.name === b.body);
  const body =
    b.body === "*" ? components.ref(method.input) : bodyField && components.field(bodyField);
  return {
    operationId: `${method.parent.name}_${method.name}`,
    summary: `${method.parent.name}.${method.name}`,
    tags: [method.parent.name],
    ...(parameters.length > 0 ? { parameters } : {}),
    // A POST with no body is an empty request (rest/shim.ts): only a publish cannot be one.
    ...(body ? { requestBody: { required: publishes, content: json(body) } } : {}),
    responses: {
      [String(successStatus(rpc))]: {
        description: "success",
        content: json(responseSchema(components, method.output, b.responseBody)),
      },
      default: {
        description: "an error, with its catalogue code",
        content: { "application/problem+json": { schema: problemRef } },
      },
    },
    security: isPublic(matrix[rpc] ?? []) ? [] : [{ bearer: [] }],
  };
}

/** The answer's schema: the output message, or its `response_body` field alone. */
function responseSchema(components: Components, output: DescMessage, field: string): Schema {
  const f = output.fields.find((x) => x.name === field);
  if (!f) return components.ref(output);
  return f.fieldKind === "message" ? components.ref(f.message) : components.field(f);
}

const problemRef = { $ref: "#/components/schemas/Problem" };
const json = (schema: Schema) => ({ "application/json": { schema } });
const notifyHeaders: Schema[] = [
  {
    name: "Idempotency-Key",
    in: "header",
    schema: { type: "string", maxLength: 255 },
    description: "Replays of the same key and body return the first notification.",
  },
  {
    name: "Herald-Project",
    in: "header",
    schema: { type: "string" },
    description: "With a CLI token: the project (id or name) to publish into.",
  },
];
