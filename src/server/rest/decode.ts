/**
 * Decoding a REST request field by field, so that every field it cannot take is named (wrong
 * JSON type, unknown name, a number sent as a string) rather than the first one alone.
 */
import {
  type DescField,
  type DescMessage,
  fromJson,
  type JsonObject,
  type JsonValue,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import { keepsValue, mayLoseDigits } from "../../domain/json-number.ts";
import type { FieldViolation } from "../../errors.ts";

/** The field name used for problems with the request body as a whole. */
export const bodyField = "(body)";

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

/** Each message's fields by the names a body or a query may give them: proto and JSON names. */
const fieldsByName = new WeakMap<DescMessage, Map<string, DescField>>();

/**
 * The field of `schema` that `key` names, by its proto name or its JSON name (protoc refuses a
 * message in which one field's JSON name is another's name, so a key names one field at most).
 */
export function fieldNamed(schema: DescMessage, key: string): DescField | undefined {
  let names = fieldsByName.get(schema);
  if (names === undefined) {
    names = new Map(schema.fields.flatMap((f) => [[f.name, f] as const, [f.jsonName, f] as const]));
    fieldsByName.set(schema, names);
  }
  return names.get(key);
}

/**
 * Decodes what it can of `json` into a message of `schema`, and lists every field it could not
 * take. `strict` (request bodies) refuses numbers sent as strings, which proto JSON tolerates.
 * The fields are decoded together first, and one by one only when that fails, to name each
 * field that does (a publish's body is one protobuf decode here, not one per field). `message`
 * is that first decode when it took every candidate: the accepted fields as a message, which the
 * shim then need not decode again.
 */
export function decodeLeniently(
  schema: DescMessage,
  json: Record<string, unknown>,
  strict: boolean,
  violations: FieldViolation[],
): { accepted: JsonObject; message?: Message } {
  const candidates: JsonObject = {};
  // Each member in the body's order: the field it names, or what is wrong with it already.
  const members: ({ field: DescField } | FieldViolation)[] = [];
  for (const [key, value] of Object.entries(json)) {
    const field = fieldNamed(schema, key);
    if (!field) {
      members.push({ field: key, message: "is not a field of this request" });
    } else if (field.jsonName in candidates) {
      members.push({ field: field.name, message: "is given twice" });
    } else if (
      strict &&
      field.fieldKind === "scalar" &&
      numericScalars.has(field.scalar) &&
      value !== null &&
      typeof value !== "number"
    ) {
      members.push({ field: field.name, message: expected(field) });
    } else {
      candidates[field.jsonName] = value as JsonValue;
      members.push({ field });
    }
  }
  const message = decoded(schema, candidates);
  const accepted: JsonObject = message ? candidates : {};
  for (const m of members) {
    if ("message" in m) {
      violations.push(m);
    } else if (!message) {
      const value = candidates[m.field.jsonName] as JsonValue;
      if (decoded(schema, { [m.field.jsonName]: value })) accepted[m.field.jsonName] = value;
      else violations.push({ field: m.field.name, message: expected(m.field) });
    }
  }
  return { accepted, message };
}

/** The message of `schema` that proto JSON's decoding makes of `json`, if it takes it. */
function decoded(schema: DescMessage, json: JsonObject): Message | undefined {
  try {
    return fromJson(schema, json);
  } catch {
    return undefined;
  }
}

/** A number whose JSON text a double cannot hold exactly, until the walk below replaces it. */
class InexactNumber {
  readonly value: number;
  readonly source: string;
  constructor(value: number, source: string) {
    this.value = value;
    this.source = source;
  }
}

/**
 * The body as JSON, or undefined (empty, or not JSON: then a violation says so), and the paths
 * (`metadata.ids[2]`) of the numbers a double cannot hold exactly: Herald refuses those where it
 * would store them as they are (metadata) instead of changing them silently.
 */
export function parseBody(
  raw: unknown,
  violations: FieldViolation[],
): { body: unknown; inexact: { path: string; source: string }[] } {
  const text = typeof raw === "string" ? raw : "";
  const inexact: { path: string; source: string }[] = [];
  if (text.trim() === "") return { body: undefined, inexact };
  try {
    // The publish path's common body has no number to check: parse it plainly.
    if (!mayLoseDigits(text)) return { body: JSON.parse(text), inexact };
    const parsed = JSON.parse(text, (_key, value, context?: { source?: string }) =>
      typeof value === "number" && context?.source && !keepsValue(context.source, value)
        ? new InexactNumber(value, context.source)
        : value,
    );
    return { body: settleNumbers(parsed, "", inexact), inexact };
  } catch (e) {
    violations.push({ field: bodyField, message: `is not valid JSON: ${(e as Error).message}` });
    return { body: undefined, inexact };
  }
}

/** Puts plain numbers back in place of InexactNumbers, listing where they were. */
function settleNumbers(
  value: unknown,
  path: string,
  inexact: { path: string; source: string }[],
): unknown {
  if (value instanceof InexactNumber) {
    inexact.push({ path, source: value.source });
    return value.value;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++)
      value[i] = settleNumbers(value[i], `${path}[${i}]`, inexact);
  } else if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = settleNumbers(o[k], path ? `${path}.${k}` : k, inexact);
  }
  return value;
}
