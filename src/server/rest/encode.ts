/** The JSON of REST answers. */
import {
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
  toJson,
} from "@bufbuild/protobuf";

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
