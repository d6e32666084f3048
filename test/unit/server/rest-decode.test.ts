/**
 * The REST shim's field-by-field decoding (server/rest/decode.ts): a body that decodes whole is
 * taken whole; one that does not names every field it cannot take, in the body's order, and
 * keeps the others.
 */
import { fromJson, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { NotifyRequestSchema } from "../../../gen/herald/v1/notify_service_pb.ts";
import type { FieldViolation } from "../../../src/errors.ts";
import { decodeLeniently, fieldNamed } from "../../../src/server/rest/decode.ts";

const decode = (json: Record<string, unknown>, strict = true) => {
  const violations: FieldViolation[] = [];
  const { accepted } = decodeLeniently(NotifyRequestSchema, json, strict, violations);
  return { accepted, violations };
};

describe("decoding a REST body field by field", () => {
  it("takes a body that decodes whole, by proto or JSON names", () => {
    expect(decode({ title: "t", priority: "high", ttl_seconds: 60, replaceKey: "k" })).toEqual({
      accepted: { title: "t", priority: "high", ttlSeconds: 60, replaceKey: "k" },
      violations: [],
    });
  });

  it("names every field it cannot take, and keeps the others", () => {
    const { accepted, violations } = decode({
      title: 5,
      message: "kept",
      require_ack: "yes",
      ttl_seconds: "60",
      colour: "red",
      metadata: [1],
    });
    expect(accepted).toEqual({ message: "kept" });
    expect(violations).toEqual([
      { field: "title", message: "must be a string" },
      { field: "require_ack", message: "must be a boolean" },
      { field: "ttl_seconds", message: "must be an integer" },
      { field: "colour", message: "is not a field of this request" },
      { field: "metadata", message: "must be a JSON object" },
    ]);
  });

  it("refuses a field given under both of its names", () => {
    expect(decode({ replace_key: "a", replaceKey: "b" }).violations).toEqual([
      { field: "replace_key", message: "is given twice" },
    ]);
  });

  it("takes numbers as strings where proto JSON does, unless strict (a body)", () => {
    expect(decode({ ttl_seconds: "60" }, false)).toEqual({
      accepted: { ttlSeconds: "60" },
      violations: [],
    });
  });

  it("gives the message it decoded when it took every candidate, so it is decoded once", () => {
    const json = { title: "t", priority: "high", ttl_seconds: 60, colour: "red" };
    const violations: FieldViolation[] = [];
    const { accepted, message } = decodeLeniently(NotifyRequestSchema, json, true, violations);
    expect(message).toBeDefined();
    expect(toJson(NotifyRequestSchema, message as never)).toEqual(
      toJson(NotifyRequestSchema, fromJson(NotifyRequestSchema, accepted)),
    );
    expect(violations).toEqual([{ field: "colour", message: "is not a field of this request" }]);
  });

  it("gives no message when a field had to be left out after decoding", () => {
    const violations: FieldViolation[] = [];
    const decoded = decodeLeniently(
      NotifyRequestSchema,
      { title: 5, message: "m" },
      true,
      violations,
    );
    expect(decoded).toEqual({ accepted: { message: "m" } });
  });

  it("finds a field by its proto name or its JSON name, and nothing else", () => {
    for (const f of NotifyRequestSchema.fields) {
      expect(fieldNamed(NotifyRequestSchema, f.name)).toBe(f);
      expect(fieldNamed(NotifyRequestSchema, f.jsonName)).toBe(f);
    }
    expect(fieldNamed(NotifyRequestSchema, "clickUrl")?.name).toBe("click_url");
    for (const key of ["colour", "", "__proto__", "constructor", "toString", "ClickUrl"]) {
      expect(fieldNamed(NotifyRequestSchema, key)).toBeUndefined();
    }
  });
});
