/**
 * The REST answers' JSON (server/rest/encode.ts): every field of the message present, in the
 * proto's field order, with proto JSON's values, absent ones as null, nested Herald messages the
 * same way (google.protobuf types as proto JSON gives them); and text that parses back to the
 * very strings and structures sent.
 */
import { create, type DescMessage, type JsonObject, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EndSessionResponseSchema } from "../../../gen/herald/v1/auth_service_pb.ts";
import {
  ListNotificationsResponseSchema,
  NotifyResponseSchema,
} from "../../../gen/herald/v1/notify_service_pb.ts";
import { restJsonText } from "../../../src/server/rest/encode.ts";

/** What a REST client must see: each field by its proto name, null when proto JSON leaves it out. */
function expected(schema: DescMessage, json: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const f of schema.fields) {
    const v = json[f.name];
    if (v === undefined || v === null) out[f.name] = null;
    else if (f.fieldKind === "message" && !f.message.typeName.startsWith("google."))
      out[f.name] = expected(f.message, v as JsonObject);
    else if (f.fieldKind === "list" && f.listKind === "message") {
      const item = f.message;
      out[f.name] = (v as JsonObject[]).map((x) => expected(item, x));
    } else out[f.name] = v;
  }
  return out;
}

const protoJson = (schema: DescMessage, m: Parameters<typeof toJson>[1]) =>
  toJson(schema, m, { useProtoFieldName: true, alwaysEmitImplicit: true }) as JsonObject;

const full = create(NotifyResponseSchema, {
  notification: {
    id: "01a21a75-850e-71e0-b80c-9f389fe4e8d0",
    topic: "deploys",
    title: 'Deploy "finished"\n\u00fc \u{1F680} </script>',
    metadata: { run: 1, nested: { list: [1, "two", null, true] } },
    ttlSeconds: 60,
    createdAt: timestampFromDate(new Date("2026-11-27T00:00:00.123Z")),
    deliveries: { total: 2, pending: 1, sent: 1 },
    deviceDeliveries: [{ deviceId: "d1", state: "sent" }, { deviceId: "d2" }],
    actions: [{ id: "retry", label: "Retry", reply: true }],
    replaceKey: "run-1",
  },
  replayed: true,
});

describe("the REST answer's JSON", () => {
  it("has every field, in the proto's order, null where proto JSON has none", () => {
    const text = restJsonText(NotifyResponseSchema, full);
    const parsed = JSON.parse(text);
    expect(parsed).toEqual(expected(NotifyResponseSchema, protoJson(NotifyResponseSchema, full)));
    expect(Object.keys(parsed)).toEqual(NotifyResponseSchema.fields.map((f) => f.name));
    const notification = NotifyResponseSchema.fields[0]?.message as DescMessage;
    expect(Object.keys(parsed.notification)).toEqual(notification.fields.map((f) => f.name));
    expect(parsed.notification.click_url).toBeNull();
    expect(parsed.notification.device_deliveries[1].device_id).toBe("d2");
  });

  it("gives strings and structures back exactly as they were", () => {
    const parsed = JSON.parse(restJsonText(NotifyResponseSchema, full));
    expect(parsed.notification.title).toBe('Deploy "finished"\n\u00fc \u{1F680} </script>');
    expect(parsed.notification.metadata).toEqual({
      run: 1,
      nested: { list: [1, "two", null, true] },
    });
    expect(parsed.notification.created_at).toBe("2026-11-27T00:00:00.123Z");
  });

  it("writes lists of messages, an empty list, and a message without fields", () => {
    const list = create(ListNotificationsResponseSchema, {
      notifications: [full.notification ?? {}, { id: "second" }],
    });
    const parsed = JSON.parse(restJsonText(ListNotificationsResponseSchema, list));
    expect(parsed).toEqual(
      expected(ListNotificationsResponseSchema, protoJson(ListNotificationsResponseSchema, list)),
    );
    expect(parsed.notifications[1].title).toBe("");
    const none = create(ListNotificationsResponseSchema);
    expect(JSON.parse(restJsonText(ListNotificationsResponseSchema, none))).toEqual({
      notifications: [],
      next_page_token: "",
    });
    expect(restJsonText(EndSessionResponseSchema, create(EndSessionResponseSchema))).toBe("{}");
  });
});
